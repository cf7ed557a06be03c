import { randomUUID } from 'node:crypto'
import type { Page } from '@svc/kit'
import { b64Encode } from '@svc/trust/base64url'
import type { RentalContext } from '../../context.ts'
import { inTransaction } from '../../db.ts'
import { rentalError } from '../../errors.ts'
import { checkAgentDid, type EngagementService } from '../engagements/index.ts'
import type { Actor, EventService } from '../events/index.ts'
import type { OrgService } from '../orgs/index.ts'
import type { OutboxService } from '../outbox/index.ts'
import type { TaskService } from '../tasks/index.ts'
import * as store from './store.ts'
import type { RatingRow, ReferenceRow } from './store.ts'

export interface RatingDeps {
  ctx: Pick<RentalContext, 'db' | 'now' | 'config' | 'sessions'>
  tasks: TaskService
  engagements: EngagementService
  outbox: OutboxService
  events: EventService
  orgs: OrgService
}

/** Who rates or publishes: the member's organization and the member. */
export interface Rater {
  orgId: string
  actor: Actor
}

const editableUntil = (deps: RatingDeps, row: RatingRow) =>
  new Date(row.created_at.getTime() + deps.ctx.config.ratingEditWindowS * 1000)

export function ratingView(deps: RatingDeps, row: RatingRow) {
  return {
    id: row.id,
    task_id: row.task_id,
    engagement_id: row.engagement_id,
    agent_did: row.agent_did,
    score: row.score,
    comment: row.comment,
    receipt: { id: row.receipt_id, leaf_hash: row.receipt_leaf_hash },
    edits: row.edits,
    editable_until: editableUntil(deps, row).toISOString(),
    created_at: row.created_at.toISOString(),
    updated_at: row.updated_at.toISOString(),
  }
}

export interface RatingInput {
  score: number
  comment?: string | undefined
  edit?: boolean | undefined
}

const blankToNull = (text: string | undefined) => {
  const trimmed = text?.trim() ?? ''
  return trimmed === '' ? null : trimmed
}

type TaskRow = NonNullable<Awaited<ReturnType<TaskService['taskById']>>>

const notRateable = (task: TaskRow) =>
  rentalError(
    'task_not_rateable',
    `the task is ${task.state}${task.state === 'completed' ? ' without a receipt' : ''}: only a completed task with its receipt can be rated`,
  )

/** The completed task's receipt as the outbox holds it: its id and leaf hash (the task's own copy must match). */
async function receiptOf(deps: RatingDeps, task: TaskRow) {
  if (task.state !== 'completed' || !task.receipt_id || !task.receipt_leaf_hash) throw notRateable(task)
  // a trial's task has no engagement and was not paid for: ratings stand on paid work only
  if (task.engagement_id === null)
    throw rentalError('task_not_rateable', 'the task is a free trial task: only paid tasks can be rated')
  const [receipt] = await deps.outbox.rows([task.receipt_id])
  if (!receipt || b64Encode(receipt.leaf_hash) !== task.receipt_leaf_hash)
    throw rentalError('task_not_rateable', 'the task’s receipt is not on record: it cannot be rated')
  return { id: task.receipt_id, leafHash: task.receipt_leaf_hash, engagementId: task.engagement_id }
}

/**
 * Rates a task of the organization, once; `edit: true` changes the rating within the edit window
 * (RENTAL_RATING_EDIT_WINDOW_S from its creation). The task row is locked, so concurrent first
 * ratings settle on one (the others: 409 already_rated). The task must have completed with its
 * `task.completed` receipt, which must be the outbox's (same leaf hash): the rating keeps both.
 */
export async function rateTask(deps: RatingDeps, who: Rater, taskId: string, input: RatingInput) {
  if (!Number.isInteger(input.score) || input.score < 1 || input.score > 5)
    throw rentalError('invalid_request', 'body.score must be an integer from 1 to 5')
  const comment = blankToNull(input.comment)
  // checked before the transaction (the outbox reads the pool); a completed task's receipt never changes
  const seen = await deps.tasks.taskById(deps.ctx.db, taskId)
  if (!seen || seen.org_id !== who.orgId)
    throw rentalError('task_not_found', `no task ${taskId} of the organization`)
  const bound = await receiptOf(deps, seen)
  await inTransaction(deps.ctx.db, async (trx) => {
    const task = (await deps.tasks.taskById(trx, taskId, true))!
    if (task.receipt_id !== bound.id) throw notRateable(task)
    const existing = await store.ratingOfTask(trx, taskId)
    const now = deps.ctx.now()
    const subjects = { task_id: taskId, engagement_id: bound.engagementId, agent_did: task.agent_did }
    if (!input.edit) {
      if (existing)
        throw rentalError(
          'already_rated',
          `the task is rated already (${existing.score} at ${existing.created_at.toISOString()}): send edit: true before ${editableUntil(deps, existing).toISOString()} to change it`,
        )
      const ratingId = `rat_${randomUUID()}`
      const made = await store.insertRating(trx, {
        id: ratingId,
        task_id: taskId,
        org_id: who.orgId,
        engagement_id: bound.engagementId,
        agent_did: task.agent_did,
        score: input.score,
        comment,
        receipt_id: bound.id,
        receipt_leaf_hash: bound.leafHash,
        created_by: who.actor.id,
        created_at: now,
        updated_at: now,
      })
      if (!made) throw rentalError('already_rated', 'the task is rated already')
      await deps.events.record(trx, {
        orgId: who.orgId,
        type: 'rating.created',
        subjects: { ...subjects, rating_id: ratingId },
        actor: who.actor,
        data: { score: input.score, comment, receipt_leaf_hash: bound.leafHash },
      })
      return ratingId
    }
    if (!existing) throw rentalError('not_rated', 'the task has no rating to edit: send it without edit')
    const until = editableUntil(deps, existing)
    if (now >= until)
      throw rentalError(
        'rating_edit_closed',
        `the rating is final: its edit window closed at ${until.toISOString()}`,
      )
    await store.editRating(trx, existing.id, { score: input.score, comment, updated_at: now })
    await deps.events.record(trx, {
      orgId: who.orgId,
      type: 'rating.edited',
      subjects: { ...subjects, rating_id: existing.id },
      actor: who.actor,
      data: {
        edit: existing.edits + 1,
        from: { score: existing.score, comment: existing.comment },
        to: { score: input.score, comment },
      },
    })
    return existing.id
  })
  return ratingView(deps, (await store.ratingOfTask(deps.ctx.db, taskId))!)
}

/** The agent's ratings: count, mean (2 decimals), how many of each score. */
export async function ratingSummary(deps: Pick<RatingDeps, 'ctx'>, agentDid: string) {
  const rows = await store.ratingSummary(deps.ctx.db, agentDid)
  const distribution: Record<'1' | '2' | '3' | '4' | '5', number> = { 1: 0, 2: 0, 3: 0, 4: 0, 5: 0 }
  let count = 0
  let sum = 0
  for (const { score, n } of rows) {
    distribution[String(score) as keyof typeof distribution] = n
    count += n
    sum += score * n
  }
  return { count, mean: count === 0 ? null : Math.round((sum * 100) / count) / 100, distribution }
}

/** Every client reads an agent's ratings (not who gave them): the summary and the ratings, newest first. */
export async function agentRatings(deps: RatingDeps, agentDid: string, page: Page) {
  checkAgentDid(agentDid)
  const summary = await ratingSummary(deps, agentDid)
  const rows = await store.ratingsOfAgent(deps.ctx.db, agentDid, page.limit, page.offset)
  return {
    agent_did: agentDid,
    ...summary,
    ratings: rows.map((r) => ({
      score: r.score,
      comment: r.comment,
      leaf_hash: r.receipt_leaf_hash,
      edited: r.edits > 0,
      created_at: r.created_at.toISOString(),
      updated_at: r.updated_at.toISOString(),
    })),
    total: summary.count,
    limit: page.limit,
    offset: page.offset,
  }
}

/** The organization's ratings of its engagement's tasks and its reference (null before one), for the export. */
export async function engagementRatings(deps: RatingDeps, orgId: string, engagementId: string) {
  const reference = await store.referenceOf(deps.ctx.db, engagementId)
  return {
    ratings: (await store.ratingsOfEngagement(deps.ctx.db, orgId, engagementId)).map((r) =>
      ratingView(deps, r),
    ),
    reference: reference && reference.org_id === orgId ? referenceView(reference) : null,
  }
}

function referenceView(row: ReferenceRow) {
  return {
    engagement_id: row.engagement_id,
    agent_did: row.agent_did,
    statement: row.statement,
    show_organization: row.show_organization,
    version: row.version,
    created_at: row.created_at.toISOString(),
    updated_at: row.updated_at.toISOString(),
  }
}

async function completedIn(deps: RatingDeps, orgId: string, engagementId: string, agentDid: string) {
  const tasks = await deps.tasks.tasksWith(orgId, agentDid)
  return tasks.filter((t) => t.engagement_id === engagementId && t.state === 'completed').length
}

/** The organization's reference of its engagement (null before one is published), and whether it may publish one. */
export async function engagementReference(deps: RatingDeps, orgId: string, engagementId: string) {
  const engagement = await deps.engagements.engagementOf(orgId, engagementId)
  if (!engagement) throw rentalError('engagement_not_found', `no engagement ${engagementId}`)
  const completed = await completedIn(deps, orgId, engagementId, engagement.agent_did)
  const row = await store.referenceOf(deps.ctx.db, engagementId)
  return {
    engagement_id: engagementId,
    completed_tasks: completed,
    may_publish: completed > 0,
    reference: row ? referenceView(row) : null,
  }
}

/**
 * Publishes the client's reference of its engagement (again: replaces it, version + 1), once the
 * engagement has a completed task; the engagement row is locked, so publishes settle in order.
 */
export async function publishReference(
  deps: RatingDeps,
  who: Rater,
  engagementId: string,
  input: { statement: string; show_organization: boolean },
) {
  const statement = input.statement.trim()
  if (statement === '') throw rentalError('invalid_request', 'body.statement must not be blank')
  // read before the transaction (the tasks are read on the pool); a completed task stays completed
  const seen = await deps.engagements.engagementOf(who.orgId, engagementId)
  if (!seen) throw rentalError('engagement_not_found', `no engagement ${engagementId}`)
  if ((await completedIn(deps, who.orgId, engagementId, seen.agent_did)) === 0)
    throw rentalError(
      'reference_not_allowed',
      'the engagement has no completed task yet: a reference follows at least one',
    )
  await inTransaction(deps.ctx.db, async (trx) => {
    const engagement = (await deps.engagements.engagementOf(who.orgId, engagementId, { trx, lock: true }))!
    const now = deps.ctx.now()
    const { inserted, previous } = await store.upsertReference(trx, {
      engagement_id: engagementId,
      org_id: who.orgId,
      agent_did: engagement.agent_did,
      statement,
      show_organization: input.show_organization,
      created_by: who.actor.id,
      created_at: now,
      updated_at: now,
    })
    await deps.events.record(trx, {
      orgId: who.orgId,
      type: inserted ? 'reference.published' : 'reference.updated',
      subjects: { engagement_id: engagementId, agent_did: engagement.agent_did },
      actor: who.actor,
      data: {
        statement,
        show_organization: input.show_organization,
        version: (previous?.version ?? 0) + 1,
        ...(previous
          ? { from: { statement: previous.statement, show_organization: previous.show_organization } }
          : {}),
      },
    })
  })
  return referenceView((await store.referenceOf(deps.ctx.db, engagementId))!)
}

/** The agent's references as every client reads them: the organization's name only with its consent. */
export async function agentReferences(deps: RatingDeps, agentDid: string, page: Page) {
  checkAgentDid(agentDid)
  const { rows, total } = await store.referencesOfAgent(deps.ctx.db, agentDid, page.limit, page.offset)
  const named = rows.filter((r) => r.show_organization).map((r) => r.org_id)
  const names = new Map((await deps.orgs.orgs([...new Set(named)])).map((o) => [o.id, o.name] as const))
  return {
    agent_did: agentDid,
    references: rows.map((r) => ({
      statement: r.statement,
      organization: r.show_organization ? { name: names.get(r.org_id) ?? null } : null,
      anonymous: !r.show_organization,
      version: r.version,
      published_at: r.created_at.toISOString(),
      updated_at: r.updated_at.toISOString(),
    })),
    total,
    limit: page.limit,
    offset: page.offset,
  }
}

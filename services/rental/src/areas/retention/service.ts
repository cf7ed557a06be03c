import { createHash, randomUUID } from 'node:crypto'
import type { RentalContext } from '../../context.ts'
import { inTransaction, type RentalDb } from '../../db.ts'
import { rentalError } from '../../errors.ts'
import type { EngagementService } from '../engagements/index.ts'
import type { Actor, EventService } from '../events/index.ts'
import type { FileService } from '../files/index.ts'
import type { OrgService } from '../orgs/index.ts'
import type { TaskService } from '../tasks/index.ts'
import { BOUNDS, DEFAULTS, isoOf, type Kind, KINDS, secondsOf } from './policy.ts'
import * as store from './store.ts'
import type { HolderType, HoldRow } from './store.ts'

export interface RetentionDeps {
  ctx: Pick<RentalContext, 'db' | 'now' | 'receipts' | 'jobs' | 'log' | 'config' | 'sessions'>
  events: EventService
  engagements: EngagementService
  tasks: TaskService
  files: FileService
  orgs: OrgService
}

/** Who acts: the organization acted on, the actor, and whether as an operator or as the organization's owner. */
export interface Holder {
  orgId: string
  actor: Actor
  as: HolderType
}

export const sha256Hex = (text: string) => createHash('sha256').update(text).digest('hex')

/** Ids as one hash: SHA-256 over the ids sorted and joined by newlines (`sha256:<hex>`). */
export const idsDigest = (ids: readonly string[]) => `sha256:${sha256Hex([...ids].sort().join('\n'))}`

export function holdView(row: HoldRow) {
  return {
    id: row.id,
    org_id: row.org_id,
    engagement_id: row.engagement_id,
    scope: row.engagement_id ? ('engagement' as const) : ('organization' as const),
    reason_sha256: `sha256:${row.reason_sha256}`,
    placed_by: row.placed_by_type,
    placed_at: row.placed_at.toISOString(),
    receipt_id: row.receipt_id,
    active: row.released_at === null,
    released_at: row.released_at?.toISOString() ?? null,
    released_by: row.released_by_type,
    release_receipt_id: row.release_receipt_id,
  }
}

/** The organization's policy in seconds (its own, or the defaults). */
export async function policyOf(db: RentalDb, orgId: string) {
  const row = await store.policyOf(db, orgId)
  return {
    tasks_s: row?.tasks_s ?? DEFAULTS.tasks_s,
    files_s: row?.files_s ?? DEFAULTS.files_s,
    events_s: row?.events_s ?? DEFAULTS.events_s,
    erase_on_owner_deletion: row?.erase_on_owner_deletion ?? false,
    is_default: !row,
    updated_at: row?.updated_at.toISOString() ?? null,
  }
}

/** GET /api/retention: the policy (seconds and ISO 8601), its bounds and defaults, and the holds. */
export async function retentionView(deps: RetentionDeps, orgId: string) {
  const policy = await policyOf(deps.ctx.db, orgId)
  const holds = await store.holdsOf(deps.ctx.db, orgId, 100)
  const kinds = Object.fromEntries(
    KINDS.map((k) => [k, { seconds: policy[`${k}_s`], duration: isoOf(policy[`${k}_s`]) }]),
  ) as Record<Kind, { seconds: number; duration: string }>
  return {
    org_id: orgId,
    policy: {
      ...kinds,
      erase_on_owner_deletion: policy.erase_on_owner_deletion,
      is_default: policy.is_default,
      updated_at: policy.updated_at,
    },
    defaults: { tasks_s: DEFAULTS.tasks_s, files_s: DEFAULTS.files_s, events_s: DEFAULTS.events_s },
    bounds: BOUNDS,
    holds: holds.map(holdView),
  }
}

/** POST /api/retention: changes some of the periods (the others stay), with a `retention.policy_changed` event. */
export async function setPolicy(
  deps: RetentionDeps,
  orgId: string,
  actor: Actor,
  input: Partial<Record<Kind, number | string>> & { erase_on_owner_deletion?: boolean | undefined },
) {
  const given = KINDS.filter((k) => input[k] !== undefined)
  const erase = input.erase_on_owner_deletion
  if (given.length === 0 && erase === undefined)
    throw rentalError(
      'nothing_to_change',
      'give at least one of tasks, files, events, erase_on_owner_deletion',
    )
  const changes = Object.fromEntries(given.map((k) => [`${k}_s`, secondsOf(k, input[k]!)]))
  await inTransaction(deps.ctx.db, async (trx) => {
    const before = await policyOf(trx, orgId)
    const next = {
      tasks_s: before.tasks_s,
      files_s: before.files_s,
      events_s: before.events_s,
      erase_on_owner_deletion: erase ?? before.erase_on_owner_deletion,
      ...changes,
    }
    await store.upsertPolicy(trx, {
      org_id: orgId,
      ...next,
      updated_by: actor.id,
      updated_at: deps.ctx.now(),
    })
    await deps.events.record(trx, {
      orgId,
      type: 'retention.policy_changed',
      actor,
      data: {
        from: {
          tasks_s: before.tasks_s,
          files_s: before.files_s,
          events_s: before.events_s,
          erase_on_owner_deletion: before.erase_on_owner_deletion,
        },
        to: next,
      },
    })
  })
  return retentionView(deps, orgId)
}

/** The hold standing over the organization's data, or over that engagement's (an organization-wide one first). */
export async function holdFor(db: RentalDb, orgId: string, engagementId?: string | null) {
  const holds = await store.activeHolds(db, orgId)
  return (
    holds.find((h) => h.engagement_id === null) ??
    (engagementId ? holds.find((h) => h.engagement_id === engagementId) : undefined)
  )
}

/**
 * Places a legal hold over the organization's data, or one engagement's (the organization's, else
 * 404): stored with its reason's SHA-256 only, receipted as `data.retention.hold` (`hold: placed`,
 * `reason_digest`) in the same transaction, with a `retention.hold_placed` event.
 */
export async function placeHold(
  deps: RetentionDeps,
  holder: Holder,
  input: { reason: string; engagement_id?: string | undefined },
) {
  const reason = input.reason.trim()
  if (reason === '') throw rentalError('invalid_request', 'body.reason must not be blank')
  const engagementId = input.engagement_id ?? null
  if (engagementId && !(await deps.engagements.engagementOf(holder.orgId, engagementId)))
    throw rentalError('engagement_not_found', `no engagement ${engagementId}`)
  const id = `hld_${randomUUID()}`
  const digest = sha256Hex(reason)
  await inTransaction(deps.ctx.db, async (trx) => {
    const receipt = await deps.ctx.receipts.record(trx, {
      type: 'data.retention.hold',
      subject: holder.orgId,
      data: {
        record: engagementId ? 'engagement' : 'organization',
        hold: 'placed',
        hold_id: id,
        org_id: holder.orgId,
        engagement_id: engagementId,
        placed_by: holder.as,
        reason_digest: `sha256:${digest}`,
      },
    })
    await store.insertHold(trx, {
      id,
      org_id: holder.orgId,
      engagement_id: engagementId,
      reason_sha256: digest,
      placed_by_type: holder.as,
      placed_by: holder.actor.id,
      placed_at: deps.ctx.now(),
      receipt_id: receipt.id,
    })
    await deps.events.record(trx, {
      orgId: holder.orgId,
      type: 'retention.hold_placed',
      subjects: { hold_id: id, ...(engagementId ? { engagement_id: engagementId } : {}) },
      actor: holder.actor,
      data: { placed_by: holder.as, reason_sha256: `sha256:${digest}`, receipt_id: receipt.id },
    })
  })
  return holdView((await store.holdById(deps.ctx.db, id))!)
}

/**
 * Releases a hold, once (409 `hold_released` after): an operator releases any; an owner only one an
 * owner placed (an operator's hold is the operator's to release: 403). Receipted as
 * `data.retention.hold` (`hold: released`, the placing reason's digest and the release's, if given).
 * Deletion resumes at the retention job's next run.
 */
export async function releaseHold(
  deps: RetentionDeps,
  holder: Holder,
  id: string,
  input: { reason?: string | undefined },
) {
  const reason = input.reason?.trim() || null
  await inTransaction(deps.ctx.db, async (trx) => {
    const row = await store.holdById(trx, id, true)
    if (!row || (holder.as !== 'operator' && row.org_id !== holder.orgId))
      throw rentalError('hold_not_found', `no legal hold ${id}`)
    if (row.released_at)
      throw rentalError('hold_released', `the hold was released at ${row.released_at.toISOString()}`)
    if (row.placed_by_type === 'operator' && holder.as !== 'operator')
      throw rentalError('forbidden', 'the hold was placed by an operator: only an operator releases it')
    const releaseDigest = reason === null ? null : sha256Hex(reason)
    const receipt = await deps.ctx.receipts.record(trx, {
      type: 'data.retention.hold',
      subject: row.org_id,
      data: {
        record: row.engagement_id ? 'engagement' : 'organization',
        hold: 'released',
        hold_id: id,
        org_id: row.org_id,
        engagement_id: row.engagement_id,
        released_by: holder.as,
        reason_digest: `sha256:${row.reason_sha256}`,
        release_reason_digest: releaseDigest === null ? null : `sha256:${releaseDigest}`,
      },
    })
    await store.markReleased(trx, id, {
      released_at: deps.ctx.now(),
      released_by_type: holder.as,
      released_by: holder.actor.id,
      release_reason_sha256: releaseDigest,
      release_receipt_id: receipt.id,
    })
    await deps.events.record(trx, {
      orgId: row.org_id,
      type: 'retention.hold_released',
      subjects: { hold_id: id, ...(row.engagement_id ? { engagement_id: row.engagement_id } : {}) },
      actor: holder.actor,
      data: { released_by: holder.as, receipt_id: receipt.id },
    })
  })
  return holdView((await store.holdById(deps.ctx.db, id))!)
}

import { randomUUID } from 'node:crypto'
import { type MoneyLocale, money, type Page } from '@svc/kit'
import type { RentalContext } from '../../context.ts'
import { inTransaction, type RentalDb } from '../../db.ts'
import { rentalError } from '../../errors.ts'
import type { BudgetService } from '../budgets/index.ts'
import type { CatalogueService } from '../catalogue/index.ts'
import type { EngagementService, EscrowRow } from '../engagements/index.ts'
import type { Actor, EventService } from '../events/index.ts'
import type { InvoiceService } from '../invoices/index.ts'
import type { OrgService } from '../orgs/index.ts'
import type { TaskService } from '../tasks/index.ts'
import { disputableOf } from './disputable.ts'
import { settle } from './settle.ts'
import * as store from './store.ts'
import type { DisputeRow, DisputeState, Outcome } from './store.ts'

export interface DisputeDeps {
  ctx: Pick<RentalContext, 'db' | 'rail' | 'receipts' | 'now' | 'provider' | 'config'>
  engagements: EngagementService
  events: EventService
  orgs: OrgService
  catalogue: CatalogueService
  tasks: TaskService
  invoices: InvoiceService
  budgets: BudgetService
}

/** Who asks: their organization and whether they are one of the platform's operators. */
export interface Caller {
  orgId: string
  operator: boolean
  actor: Actor
}

export interface Evidence {
  task_ids?: string[] | undefined
  receipt_leaf_hashes?: string[] | undefined
}

const notFound = (id: string) => rentalError('dispute_not_found', `no dispute ${id}`)
const wrongState = (row: { state: DisputeState }, move: string) =>
  rentalError('dispute_state', `the dispute is ${row.state}: it cannot be ${move}`)

const evidenceOf = (value: unknown) => {
  const e = (value ?? {}) as Evidence
  return { task_ids: e.task_ids ?? [], receipt_leaf_hashes: e.receipt_leaf_hashes ?? [] }
}

export function disputeView(row: DisputeRow, escrowIds: string[], locale: MoneyLocale = 'en') {
  const m = (fils: number) => money(fils, row.currency, locale)
  return {
    id: row.id,
    state: row.state,
    engagement_id: row.engagement_id,
    task_id: row.task_id,
    agent_did: row.agent_did,
    amount: m(Number(row.amount_fils)),
    reason: row.reason,
    evidence: evidenceOf(row.evidence),
    escrow_ids: escrowIds,
    response:
      row.response === null ? null : { text: row.response, evidence: evidenceOf(row.response_evidence) },
    resolution:
      row.outcome === null
        ? null
        : {
            outcome: row.outcome,
            client: m(Number(row.client_fils)),
            provider: m(Number(row.provider_fils)),
            body: row.resolution as Record<string, unknown>,
            signature: row.resolution_signature!,
            receipt_id: row.receipt_id,
            settlement: row.settlement as Record<string, unknown>,
          },
    created_at: row.created_at.toISOString(),
    updated_at: row.updated_at.toISOString(),
  }
}

/** The evidence's tasks must be the organization's, of the engagement in question. */
async function checkEvidence(
  deps: DisputeDeps,
  trx: RentalDb,
  orgId: string,
  engagementId: string,
  e: Evidence,
) {
  for (const taskId of e.task_ids ?? []) {
    const task = await deps.tasks.taskById(trx, taskId)
    if (!task || task.org_id !== orgId || task.engagement_id !== engagementId)
      throw rentalError(
        'invalid_request',
        `evidence.task_ids: ${taskId} is not a task of engagement ${engagementId}`,
      )
  }
}

/**
 * The escrows in question, locked: the task's, or the engagement's opened ones. The engagement's
 * escrow ids are read before the transaction (`listed`): the pool is not read inside one.
 */
async function escrowsInQuestion(
  deps: DisputeDeps,
  trx: RentalDb,
  orgId: string,
  input: OpenInput,
  listed: string[],
): Promise<{ engagementId: string; taskId: string | null; escrows: EscrowRow[] }> {
  if (input.task_id !== undefined) {
    const task = await deps.tasks.taskById(trx, input.task_id)
    if (!task || task.org_id !== orgId) throw rentalError('task_not_found', `no task ${input.task_id}`)
    if (task.engagement_id === null)
      throw rentalError('not_disputable', `task ${task.id} is a trial’s: nothing is held or paid for it`)
    const escrow = await deps.engagements.escrowOfOrg(orgId, { taskId: task.id }, { trx, lock: true })
    return { engagementId: task.engagement_id, taskId: task.id, escrows: escrow ? [escrow] : [] }
  }
  const engagement = await deps.engagements.engagementOf(orgId, input.engagement_id!, { trx })
  if (!engagement) throw rentalError('engagement_not_found', `no engagement ${input.engagement_id}`)
  const escrows = []
  for (const id of listed) {
    const escrow = await deps.engagements.escrowOfOrg(orgId, { escrowId: id }, { trx, lock: true })
    if (escrow) escrows.push(escrow)
  }
  return { engagementId: engagement.id, taskId: null, escrows }
}

export interface OpenInput {
  task_id?: string | undefined
  engagement_id?: string | undefined
  amount_fils: number
  reason: string
  evidence?: Evidence | undefined
}

/**
 * The client opens a dispute: the escrows in question locked, the amount at most what they hold or
 * paid, none of them in another live dispute; from now on they are frozen (no release).
 */
export async function openDispute(deps: DisputeDeps, caller: Caller, input: OpenInput) {
  if ((input.task_id === undefined) === (input.engagement_id === undefined))
    throw rentalError('invalid_request', 'body: give task_id or engagement_id (one of them)')
  if (!Number.isSafeInteger(input.amount_fils) || input.amount_fils <= 0)
    throw rentalError('invalid_request', 'body.amount_fils must be a positive integer of fils')
  const id = `dsp_${randomUUID()}`
  const listed =
    input.engagement_id !== undefined &&
    (await deps.engagements.engagementOf(caller.orgId, input.engagement_id))
      ? (await deps.engagements.escrowsOf(input.engagement_id)).map((e) => e.id)
      : []
  await inTransaction(deps.ctx.db, async (trx) => {
    const { engagementId, taskId, escrows } = await escrowsInQuestion(deps, trx, caller.orgId, input, listed)
    const live = await store.liveDisputeOn(
      trx,
      escrows.map((e) => e.id),
    )
    if (live)
      throw rentalError(
        'dispute_open',
        `escrow ${live.escrow_id} is in dispute ${live.id} (${live.state}) already`,
      )
    const parts = []
    for (const escrow of escrows) parts.push(await disputableOf(trx, escrow))
    // held escrows first: a resolution's client share is taken from them before paid ones
    const opened = parts
      .filter((p) => p.left > 0)
      .sort((a, b) => (a.escrow.state === b.escrow.state ? 0 : a.escrow.state === 'open' ? -1 : 1))
      .map((p) => p.escrow)
    const inQuestion = parts.reduce((sum, p) => sum + p.left, 0)
    if (inQuestion === 0)
      throw rentalError(
        'not_disputable',
        parts.length === 0
          ? 'nothing is held or paid for it: no opened escrow'
          : parts.length === 1
            ? parts[0]!.why!
            : `nothing is left to dispute: ${[...new Set(parts.map((p) => p.why))].join('; ')}`,
      )
    if (input.amount_fils > inQuestion)
      throw rentalError(
        'not_disputable',
        `body.amount_fils: at most the ${inQuestion} fils held or paid for it and not refunded`,
      )
    await checkEvidence(deps, trx, caller.orgId, engagementId, input.evidence ?? {})
    const engagement = (await deps.engagements.engagementOf(caller.orgId, engagementId, { trx }))!
    const now = deps.ctx.now()
    await store.insertDispute(
      trx,
      {
        id,
        org_id: caller.orgId,
        engagement_id: engagementId,
        task_id: taskId,
        agent_did: engagement.agent_did,
        amount_fils: input.amount_fils,
        reason: input.reason,
        evidence: JSON.stringify(evidenceOf(input.evidence)),
        state: 'open',
        opened_by: caller.actor.id,
        created_at: now,
        updated_at: now,
      },
      opened.map((e) => e.id),
    )
    await record(deps, trx, caller.orgId, caller.actor, id, engagementId, 'dispute.opened', {
      amount_fils: input.amount_fils,
      reason: input.reason,
      task_id: taskId,
      escrow_ids: opened.map((e) => e.id),
    })
  })
  return viewOf(deps, id)
}

async function viewOf(deps: DisputeDeps, id: string, locale: MoneyLocale = 'en') {
  const row = (await store.disputeById(deps.ctx.db, id))!
  return disputeView(row, await store.escrowIdsOf(deps.ctx.db, id), locale)
}

/** Who the caller is to the dispute (its client, its provider, an operator); anyone else 404. */
async function standingOf(deps: DisputeDeps, caller: Caller, id: string) {
  const row = await store.disputeById(deps.ctx.db, id)
  if (!row) throw notFound(id)
  const provider = caller.operator || (await deps.catalogue.isProviderOf(caller.orgId, row.agent_did))
  if (row.org_id !== caller.orgId && !provider) throw notFound(id)
  return { provider, client: row.org_id === caller.orgId }
}

export async function disputeGet(deps: DisputeDeps, caller: Caller, id: string, locale: MoneyLocale) {
  await standingOf(deps, caller, id)
  return viewOf(deps, id, locale)
}

/** The organization's disputes, those about agents it provides, or (an operator) every one. */
export async function disputeList(deps: DisputeDeps, caller: Caller, page: Page, locale: MoneyLocale) {
  const agentDids = (await deps.catalogue.catalogue())
    .flatMap((j) => j.agents)
    .filter((a) => a.provider.id === caller.orgId)
    .map((a) => a.did)
  const { rows, total } = await store.disputesOf(
    deps.ctx.db,
    { orgId: caller.orgId, agentDids: [...new Set(agentDids)], all: caller.operator },
    page.limit,
    page.offset,
  )
  const disputes = []
  for (const row of rows)
    disputes.push(disputeView(row, await store.escrowIdsOf(deps.ctx.db, row.id), locale))
  return { disputes, total, limit: page.limit, offset: page.offset }
}

/** The agent's provider organization (or an operator) answers an open dispute, once. */
export async function respondDispute(
  deps: DisputeDeps,
  caller: Caller,
  id: string,
  input: { text: string; evidence?: Evidence | undefined },
) {
  return move(deps, caller, id, async (trx, row, standing) => {
    if (!standing.provider)
      throw rentalError('forbidden', 'only the agent’s provider organization or an operator may respond')
    if (row.state !== 'open') throw wrongState(row, 'responded to')
    await checkEvidence(deps, trx, row.org_id, row.engagement_id, { task_ids: input.evidence?.task_ids })
    await change(trx, row, ['open'], {
      state: 'responded',
      response: input.text,
      response_evidence: JSON.stringify(evidenceOf(input.evidence)),
      updated_at: deps.ctx.now(),
    })
    await record(deps, trx, row.org_id, caller.actor, id, row.engagement_id, 'dispute.responded', {
      text: input.text,
    })
  })
}

/** The client withdraws its dispute while it is open or responded: the escrows are unfrozen. */
export async function withdrawDispute(deps: DisputeDeps, caller: Caller, id: string) {
  return move(deps, caller, id, async (trx, row, standing) => {
    if (!standing.client)
      throw rentalError('forbidden', 'only the client that opened the dispute may withdraw it')
    if (!store.LIVE.includes(row.state)) throw wrongState(row, 'withdrawn')
    await change(trx, row, store.LIVE, { state: 'withdrawn', updated_at: deps.ctx.now() })
    await record(deps, trx, row.org_id, caller.actor, id, row.engagement_id, 'dispute.withdrawn', {})
  })
}

export interface ResolveInput {
  outcome: Outcome
  client_fils?: number | undefined
  provider_fils?: number | undefined
}

/** What each side gets of the amount in question: all, nothing, or a split that adds up to it. */
function sharesOf(row: DisputeRow, input: ResolveInput) {
  const amount = Number(row.amount_fils)
  if (input.outcome !== 'split') {
    if (input.client_fils !== undefined || input.provider_fils !== undefined)
      throw rentalError(
        'invalid_request',
        'body: client_fils and provider_fils go with the split outcome only',
      )
    return input.outcome === 'client' ? { client: amount, provider: 0 } : { client: 0, provider: amount }
  }
  const { client_fils: client, provider_fils: provider } = input
  if (
    client === undefined ||
    provider === undefined ||
    client <= 0 ||
    provider <= 0 ||
    client + provider !== amount
  )
    throw rentalError(
      'invalid_request',
      `body: a split gives client_fils and provider_fils, both positive, adding up to ${amount}`,
    )
  return { client, provider }
}

/**
 * An operator resolves an open or responded dispute, once (the row locked, moved only from a live
 * state): the money settled (see settle.ts), the resolution signed by the provider identity and
 * recorded as a `dispute.resolved` receipt, the event.
 */
export async function resolveDispute(deps: DisputeDeps, caller: Caller, id: string, input: ResolveInput) {
  // the client's name for the credit notes: read before the transaction (the orgs area reads the pool)
  const found = await store.disputeById(deps.ctx.db, id)
  const [org] = found ? await deps.orgs.orgs([found.org_id]) : []
  return move(deps, caller, id, async (trx, row) => {
    if (!caller.operator)
      throw rentalError('forbidden', 'only the platform’s operators may resolve a dispute')
    if (!store.LIVE.includes(row.state)) throw wrongState(row, 'resolved')
    const shares = sharesOf(row, input)
    const escrowIds = await store.escrowIdsOf(trx, id)
    const orgName = org?.name ?? row.org_id
    const settled = await settle(deps, trx, { ...caller, orgName }, row, escrowIds, input.outcome, shares)
    await change(trx, row, store.LIVE, {
      state: 'resolved',
      outcome: input.outcome,
      client_fils: shares.client,
      provider_fils: shares.provider,
      resolution: JSON.stringify(settled.body),
      resolution_signature: settled.signature,
      settlement: JSON.stringify(settled.settlement),
      receipt_id: settled.receiptId,
      updated_at: deps.ctx.now(),
    })
    await record(deps, trx, row.org_id, caller.actor, id, row.engagement_id, 'dispute.resolved', {
      outcome: input.outcome,
      client_fils: shares.client,
      provider_fils: shares.provider,
      receipt_id: settled.receiptId,
      ...settled.settlement,
    })
  })
}

async function move(
  deps: DisputeDeps,
  caller: Caller,
  id: string,
  work: (trx: RentalDb, row: DisputeRow, standing: { provider: boolean; client: boolean }) => Promise<void>,
) {
  const standing = await standingOf(deps, caller, id)
  await inTransaction(deps.ctx.db, async (trx) =>
    work(trx, (await store.disputeById(trx, id, true))!, standing),
  )
  return viewOf(deps, id)
}

async function change(
  trx: RentalDb,
  row: DisputeRow,
  from: DisputeState[],
  to: Parameters<typeof store.moveDispute>[3],
) {
  // the row is locked, so this holds; the condition keeps it so without the lock too
  if (!(await store.moveDispute(trx, row.id, from, to))) throw wrongState(row, to.state)
}

/** A dispute's event, on its engagement's stream, in the client organization. */
function record(
  deps: DisputeDeps,
  trx: RentalDb,
  orgId: string,
  actor: Actor,
  id: string,
  engagementId: string,
  type: 'dispute.opened' | 'dispute.responded' | 'dispute.resolved' | 'dispute.withdrawn',
  data: Record<string, unknown>,
) {
  return deps.events.record(trx, {
    orgId,
    type,
    stream: engagementId,
    subjects: { dispute_id: id, engagement_id: engagementId },
    actor,
    data,
  })
}

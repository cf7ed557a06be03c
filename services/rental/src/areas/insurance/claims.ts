import { randomUUID } from 'node:crypto'
import { inTransaction, type RentalDb } from '../../db.ts'
import { rentalError } from '../../errors.ts'
import { engagementEvent, engagementNotFound, walletOf } from '../engagements/service.ts'
import type { Actor, EventView } from '../events/index.ts'
import { type InsuranceDeps, POOL, policyView, RESERVE } from './service.ts'
import * as store from './store.ts'
import type { CoveredEvent, PolicyRow } from './store.ts'

export interface ClaimInput {
  type: CoveredEvent
  amount_fils: number
  task_id?: string | undefined
  event_id?: string | undefined
  incident_id?: string | undefined
  description?: string | undefined
}

/** How far back the log is searched for an incident's report (newest first, in pages). */
const INCIDENT_SCAN = 1000

type Verdict = { key: string; refused?: string }

/** What the evidence on record says of the covered event: its unique key, or why it is refused. */
async function verdictOf(
  deps: InsuranceDeps,
  trx: RentalDb,
  policy: PolicyRow,
  input: ClaimInput,
  recorded: EventView | undefined,
): Promise<Verdict> {
  const inPeriod = (at: Date) => at >= policy.starts_at && at < policy.ends_at
  if (input.type === 'failed_task') {
    if (!input.task_id) return { key: 'failed_task:', refused: 'no evidence: name the failed task (task_id)' }
    const key = `failed_task:${input.task_id}`
    const task = await deps.tasks.taskById(trx, input.task_id)
    if (!task || task.org_id !== policy.org_id || task.engagement_id !== policy.engagement_id)
      return { key, refused: `no task ${input.task_id} of this engagement on record` }
    if (task.state !== 'failed') return { key, refused: `task ${task.id} is ${task.state}, not failed` }
    if (!inPeriod(task.completed_at ?? task.created_at))
      return { key, refused: `task ${task.id} failed outside the policy’s period` }
    return { key }
  }
  const event = recorded
  if (input.type === 'sla_breach') {
    if (!input.event_id)
      return { key: 'sla_breach:', refused: 'no evidence: name the sla.breached event (event_id)' }
    const key = `sla_breach:${input.event_id}`
    if (!event || event.subjects.engagement_id !== policy.engagement_id)
      return { key, refused: `no sla.breached event ${input.event_id} for this engagement on record` }
    if (!inPeriod(new Date(event.created_at)))
      return { key, refused: `the breach ${event.id} was recorded outside the policy’s period` }
    return { key }
  }
  if (!input.incident_id)
    return { key: 'incident:', refused: 'no evidence: name the reported incident (incident_id)' }
  const key = `incident:${input.incident_id}`
  if (!event)
    return { key, refused: `no incident.reported event for incident ${input.incident_id} on record` }
  const data = (event.data ?? {}) as Record<string, unknown>
  if ((data.engagement_id ?? event.subjects.engagement_id) !== policy.engagement_id)
    return { key, refused: `incident ${input.incident_id} is not about this engagement` }
  if (!inPeriod(new Date(event.created_at)))
    return { key, refused: `incident ${input.incident_id} was reported outside the policy’s period` }
  return { key }
}

/**
 * The event a claim names, as the log has it (read before the claim's transaction: the log is
 * append-only): the organization's `sla.breached` event by id, or its `incident.reported` event of
 * the incident (searched newest first, within the last INCIDENT_SCAN reports).
 */
async function recordedEvent(deps: InsuranceDeps, orgId: string, input: ClaimInput) {
  if (input.type === 'sla_breach' && input.event_id) {
    const seq = /^evt_(\d{1,15})$/.exec(input.event_id)?.[1]
    if (!seq) return undefined
    const [event] = await deps.events.ofOrg(orgId, {
      types: ['sla.breached'],
      beforeSeq: Number(seq) + 1,
      limit: 1,
    })
    return event?.id === input.event_id ? event : undefined
  }
  if (input.type !== 'incident' || !input.incident_id) return undefined
  let before: number | undefined
  for (let seen = 0; seen < INCIDENT_SCAN; seen += 200) {
    const page = await deps.events.ofOrg(orgId, {
      types: ['incident.reported'],
      beforeSeq: before,
      limit: 200,
    })
    const event = page.find(
      (e) =>
        ((e.data ?? {}) as Record<string, unknown>).incident_id === input.incident_id ||
        e.subjects.incident_id === input.incident_id,
    )
    if (event || page.length < 200) return event
    before = page[page.length - 1]!.seq
  }
  return undefined
}

/**
 * A claim on the engagement's active policy, decided in one transaction with the policy row locked
 * (so concurrent claims are decided one after the other): refused with the reason (not covered,
 * no evidence on record, paid already, coverage spent), or paid up to the remaining coverage as a
 * transfer platform:insurance → the client's wallet (what the pool lacks from the reserve), key
 * `insurance-claim:<claim>`; a covered event is paid once (and a unique index says so too).
 */
export async function fileClaim(
  deps: InsuranceDeps,
  orgId: string,
  engagementId: string,
  input: ClaimInput,
  actor: Actor,
) {
  if (!(await deps.engagements.engagementOf(orgId, engagementId))) throw engagementNotFound(engagementId)
  const id = `clm_${randomUUID()}`
  const recorded = await recordedEvent(deps, orgId, input)
  const policyId = await inTransaction(deps.ctx.db, async (trx) => {
    const policy = await store.activePolicyOf(trx, orgId, engagementId, true)
    if (!policy)
      throw rentalError('policy_not_found', `engagement ${engagementId} has no active insurance policy`)
    const now = deps.ctx.now()
    if (now < policy.starts_at || now >= policy.ends_at)
      throw rentalError(
        'policy_not_active',
        `the policy runs from ${policy.starts_at.toISOString()} to ${policy.ends_at.toISOString()}`,
      )
    const claims = await store.claimsOf(trx, policy.id)
    const left = Number(policy.coverage_fils) - claims.reduce((sum, c) => sum + Number(c.paid_fils), 0)
    let verdict: Verdict = { key: `${input.type}:` }
    if (!policy.covers.includes(input.type)) verdict.refused = `the policy does not cover ${input.type}`
    else verdict = await verdictOf(deps, trx, policy, input, recorded)
    const earlier = claims.find((c) => c.state === 'paid' && c.event_key === verdict.key)
    if (!verdict.refused && earlier) verdict.refused = `this event was paid already by claim ${earlier.id}`
    if (!verdict.refused && left <= 0) verdict.refused = 'the policy’s coverage is spent'
    const paid = verdict.refused ? 0 : Math.min(input.amount_fils, left)
    let transferId: string | null = null
    if (paid > 0) {
      const pool = Math.max(0, Math.min(paid, await deps.ctx.rail.balance(trx, POOL)))
      transferId = (
        await deps.ctx.rail.transfer(trx, {
          idempotencyKey: `insurance-claim:${id}`,
          kind: 'insurance_claim',
          postings: [
            { account: POOL, amount: -pool },
            { account: RESERVE, amount: -(paid - pool) },
            { account: walletOf(orgId), amount: paid },
          ].filter((p) => p.amount !== 0),
          memo: { claim_id: id, policy_id: policy.id, engagement_id: engagementId, event: verdict.key },
        })
      ).id
    }
    const evidence = Object.fromEntries(
      (['task_id', 'event_id', 'incident_id', 'description'] as const)
        .filter((k) => input[k] !== undefined)
        .map((k) => [k, input[k]]),
    )
    await store.insertClaim(trx, {
      id,
      policy_id: policy.id,
      org_id: orgId,
      event_type: input.type,
      event_key: verdict.key,
      evidence: JSON.stringify(evidence),
      requested_fils: input.amount_fils,
      paid_fils: paid,
      state: verdict.refused ? 'refused' : 'paid',
      refuse_reason: verdict.refused ?? null,
      transfer_id: transferId,
      created_by: actor.id,
      created_at: now,
    })
    await engagementEvent(
      deps.events,
      trx,
      orgId,
      engagementId,
      actor,
      verdict.refused ? 'insurance.claim_refused' : 'insurance.claim_paid',
      {
        type: input.type,
        requested_fils: input.amount_fils,
        paid_fils: paid,
        reason: verdict.refused ?? null,
        transfer_id: transferId,
      },
      { policy_id: policy.id, claim_id: id },
    )
    return policy.id
  })
  const policy = (await store.latestPolicyOf(deps.ctx.db, orgId, engagementId))!
  const view = await policyView(deps, deps.ctx.db, policy, 'en')
  return { claim: view.claims.find((c) => c.id === id)!, policy: { ...view, id: policyId } }
}

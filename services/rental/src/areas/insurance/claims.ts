import { randomUUID } from 'node:crypto'
import { inTransaction, type RentalDb } from '../../db.ts'
import { rentalError } from '../../errors.ts'
import { engagementEvent, engagementNotFound, walletOf } from '../engagements/index.ts'
import type { Actor } from '../events/index.ts'
import { POOL, RESERVE } from './funds.ts'
import { type InsuranceDeps, policyView } from './service.ts'
import * as store from './store.ts'
import type { CoveredEvent, PolicyRow } from './store.ts'

export interface ClaimInput {
  type: CoveredEvent
  /** At most this much (the loss the evidence proves when absent). */
  amount_fils?: number | undefined
  task_id?: string | undefined
  event_id?: string | undefined
  incident_id?: string | undefined
  description?: string | undefined
}

/** The breach a claim names with its credit, read before the claim's transaction (records only grow). */
type Breach = Awaited<ReturnType<InsuranceDeps['sla']['breachOf']>>

/** The covered event's unique key and the loss the record proves in fils, or why it is refused. */
type Verdict = { key: string; loss?: number; refused?: string }

/**
 * What the record says of the covered event: a failed task of this engagement that began and
 * failed in the policy's period, failed by its agent (never by the client's own cancel, kill switch
 * or rejected approval), whose escrow the client had opened (its loss: that price); an SLA breach
 * of this engagement recorded in the period, whose credit the SLA has computed (its loss: that
 * credit). An incident measures no loss in money by itself: refused.
 */
async function verdictOf(
  deps: InsuranceDeps,
  trx: RentalDb,
  policy: PolicyRow,
  input: ClaimInput,
  breach: Breach,
): Promise<Verdict> {
  const inPeriod = (at: Date) => at >= policy.starts_at && at < policy.ends_at
  if (input.type === 'failed_task') {
    if (!input.task_id) return { key: 'failed_task:', refused: 'no evidence: name the failed task (task_id)' }
    const key = `failed_task:${input.task_id}`
    const task = await deps.tasks.taskById(trx, input.task_id)
    if (!task || task.org_id !== policy.org_id || task.engagement_id !== policy.engagement_id)
      return { key, refused: `no task ${input.task_id} of this engagement on record` }
    if (task.state !== 'failed') return { key, refused: `task ${task.id} is ${task.state}, not failed` }
    if (task.end_cause !== 'agent')
      return {
        key,
        refused: `task ${task.id} failed by your own doing (${task.error ?? 'the client ended it'}): what the client causes is not covered`,
      }
    if (!inPeriod(task.created_at) || !inPeriod(task.completed_at ?? task.created_at))
      return { key, refused: `task ${task.id} did not begin and fail within the policy’s period` }
    const escrow = await deps.engagements.escrowOfOrg(policy.org_id, { taskId: task.id }, { trx })
    if (!escrow || escrow.open_transfer_id === null)
      return {
        key,
        refused: `no money was held for task ${task.id} (its escrow was never opened): no loss to pay`,
      }
    return { key, loss: Number(escrow.amount_fils) }
  }
  if (input.type === 'sla_breach') {
    if (!input.event_id)
      return { key: 'sla_breach:', refused: 'no evidence: name the sla.breached event (event_id)' }
    const key = `sla_breach:${input.event_id}`
    const found = breach
    if (!found)
      return { key, refused: `no sla.breached event ${input.event_id} for this engagement on record` }
    if (!inPeriod(found.breach.created_at))
      return { key, refused: `the breach ${input.event_id} was recorded outside the policy’s period` }
    if (!found.credit)
      return {
        key,
        refused: `the breach’s credit is computed when its statement month closes: claim ${input.event_id} after that`,
      }
    const loss = Number(found.credit.owed_fils)
    if (loss <= 0) return { key, refused: `the breach’s credit is 0 (no fees in its month): no loss to pay` }
    return { key, loss }
  }
  const key = `incident:${input.incident_id ?? ''}`
  return {
    key,
    refused:
      'an incident proves no loss in money by itself: claim the failed tasks or the SLA breach it caused',
  }
}

/**
 * A claim on the engagement's active policy, decided in one transaction with the policy row locked
 * (so concurrent claims are decided one after the other): refused with the reason (not covered,
 * not proven by the record, caused by the client, paid already, coverage spent), or paid the least
 * of the loss proven, the amount asked and the coverage left, as a transfer from the pool (what the
 * pool lacks from the platform's reserve; neither goes below zero) to the client's wallet, key
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
  const breach =
    input.type === 'sla_breach' && input.event_id
      ? await deps.sla.breachOf(orgId, engagementId, input.event_id)
      : undefined
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
    else verdict = await verdictOf(deps, trx, policy, input, breach)
    const earlier = claims.find((c) => c.state === 'paid' && c.event_key === verdict.key)
    if (!verdict.refused && earlier) verdict.refused = `this event was paid already by claim ${earlier.id}`
    if (!verdict.refused && left <= 0) verdict.refused = 'the policy’s coverage is spent'
    const funds = (await deps.ctx.rail.balance(trx, POOL)) + (await deps.ctx.rail.balance(trx, RESERVE))
    if (!verdict.refused && funds <= 0) verdict.refused = 'the platform’s insurance funds are empty'
    const paid = verdict.refused ? 0 : Math.min(verdict.loss ?? 0, input.amount_fils ?? Infinity, left, funds)
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
      requested_fils: input.amount_fils ?? verdict.loss ?? 0,
      loss_fils: verdict.loss ?? null,
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
        requested_fils: input.amount_fils ?? null,
        loss_fils: verdict.loss ?? null,
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

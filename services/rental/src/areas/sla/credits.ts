import { randomUUID } from 'node:crypto'
import { inTransaction } from '../../db.ts'
import type { SlaBody } from '../engagements/bodies.ts'
import { walletOf } from '../engagements/index.ts'
import { SYSTEM } from '../events/index.ts'
import { feePartOf } from '../refunds/index.ts'
import { levelsOf, remeasureUnanswered, type SlaDeps } from './service.ts'
import * as store from './store.ts'

/** Breaches one pass credits at most (the rest wait for the next pass). */
const BATCH = 100

/** The statement period holding `at`: its calendar month, UTC (the statements area's default period). */
export function periodAt(at: Date) {
  const from = new Date(Date.UTC(at.getUTCFullYear(), at.getUTCMonth(), 1))
  const to = new Date(Date.UTC(at.getUTCFullYear(), at.getUTCMonth() + 1, 1))
  return { from, to }
}

/** `bps` basis points of `fils`, rounded half up (exact in BigInt): ⌊(fils × bps + 5000) ÷ 10 000⌋. */
export const creditOf = (fils: number, bps: number) => Number((BigInt(fils) * BigInt(bps) + 5000n) / 10_000n)

export type CreditOutcome = 'credited' | 'done'

/**
 * Credits one breach of a closed period, once: in one transaction with the engagement's row locked
 * (so the breaches of one engagement are credited one after the other, and a concurrent pass finds
 * the credit made and does nothing), `credit_bps_per_breach` of the engagement's fees in the
 * breach's period (its escrows released in the period, fee included), rounded half up, capped so
 * that the period's credits never exceed its fees; paid back from where the fees went, in the
 * same proportions (the platform's fee part as a refund computes it, the rest from the agent's
 * payout; each part at most what that account holds), as one balanced rail transfer `sla_credit`
 * keyed `sla-credit:<event id>` to the client's wallet; its `sla.credited` receipt and event and
 * the credit's row in the same transaction. A credit of 0 (no fees, or the cap reached) still
 * records its row, receipt and event (no transfer), so the breach is settled.
 */
export async function creditBreach(deps: SlaDeps, slaEventId: string): Promise<CreditOutcome> {
  return inTransaction(deps.ctx.db, async (trx) => {
    const breach = await store.slaEventById(trx, slaEventId)
    if (!breach || breach.type !== 'sla.breached') return 'done'
    const engagement = await deps.engagements.engagementOf(breach.org_id, breach.engagement_id, {
      trx,
      lock: true,
    })
    if (!engagement || (await store.creditOfBreach(trx, breach.id))) return 'done'
    const period = periodAt(breach.created_at)
    const { levels } = levelsOf(engagement.sla as SlaBody)
    const released = (
      await deps.engagements.releasedEscrows(trx, engagement.org_id, { engagementId: engagement.id })
    ).filter((e) => e.released_at !== null && e.released_at >= period.from && e.released_at < period.to)
    const fees = released.reduce((sum, e) => sum + Number(e.amount_fils), 0)
    const platformFees = released.reduce((sum, e) => sum + Number(e.fee_fils ?? 0), 0)
    const owed = creditOf(fees, levels.credit_bps_per_breach)
    const left = Math.max(0, fees - (await store.creditedInPeriod(trx, engagement.id, period.from)))
    const capped = Math.min(owed, left)
    const payout = `payout:${engagement.agent_did}`
    const feeShare = feePartOf(capped, platformFees, fees)
    const held = async (account: string) => Math.max(0, await deps.ctx.rail.balance(trx, account))
    const feePart = Math.min(feeShare, await held('platform:fees'))
    const payoutPart = Math.min(capped - feeShare, await held(payout))
    const amount = feePart + payoutPart
    const wallet = walletOf(engagement.org_id)
    const id = `slac_${randomUUID()}`
    const transfer =
      amount > 0
        ? await deps.ctx.rail.transfer(trx, {
            idempotencyKey: `sla-credit:${breach.event_id}`,
            kind: 'sla_credit',
            postings: [
              { account: payout, amount: -payoutPart },
              { account: 'platform:fees', amount: -feePart },
              { account: wallet, amount },
            ].filter((p) => p.amount !== 0),
            memo: {
              sla_credit_id: id,
              breach_event_id: breach.event_id,
              engagement_id: engagement.id,
              term: breach.term,
              period_from: period.from.toISOString(),
            },
          })
        : null
    const data = {
      org_id: engagement.org_id,
      engagement_id: engagement.id,
      agent_did: engagement.agent_did,
      breach_event_id: breach.event_id,
      term: breach.term,
      period_from: period.from.toISOString(),
      period_to: period.to.toISOString(),
      fees_fils: fees,
      credit_bps: levels.credit_bps_per_breach,
      owed_fils: owed,
      amount_fils: amount,
      fee_part_fils: feePart,
      payout_part_fils: payoutPart,
      currency: 'AED',
      transfer_id: transfer?.id ?? null,
    }
    const receipt = await deps.ctx.receipts.record(trx, { type: 'sla.credited', subject: id, data })
    const { id: eventId } = await deps.events.record(trx, {
      orgId: engagement.org_id,
      type: 'sla.credited',
      stream: engagement.id,
      subjects: { engagement_id: engagement.id, sla_credit_id: id },
      actor: SYSTEM,
      data: { ...data, credit_id: id, receipt_leaf_hash: receipt.leafHash },
    })
    await store.insertCredit(trx, {
      id,
      sla_event_id: breach.id,
      event_id: breach.event_id,
      org_id: engagement.org_id,
      engagement_id: engagement.id,
      term: breach.term,
      period_from: period.from,
      period_to: period.to,
      fees_fils: fees,
      credit_bps: levels.credit_bps_per_breach,
      owed_fils: owed,
      amount_fils: amount,
      transfer_id: transfer?.id ?? null,
      receipt_id: receipt.id,
      receipt_leaf_hash: receipt.leafHash,
      credited_event_id: eventId,
      created_at: deps.ctx.now(),
    })
    return 'credited'
  })
}

/**
 * One pass of the credit job: every breach recorded before the current period's start (so in a
 * period that has ended) and not credited yet, oldest first, credited (at most BATCH a pass); then
 * the engagements of unanswered incidents re-measured. Safe to run on every instance at once.
 */
export async function creditClosedPeriods(deps: SlaDeps) {
  const { from } = periodAt(deps.ctx.now())
  let credited = 0
  for (const breach of await store.uncreditedBreaches(deps.ctx.db, from, BATCH)) {
    try {
      if ((await creditBreach(deps, breach.id)) === 'credited') credited++
    } catch (err) {
      // another instance's transaction took the same key first (its credit stands), or the database: next pass
      deps.ctx.log.warn({ breach: breach.id, err: (err as Error).message }, 'sla credit not posted')
    }
  }
  await remeasureUnanswered(deps)
  return { credited }
}

/**
 * The credit job of this instance: every RENTAL_SLA_CREDIT_CHECK_MS one pass. Every instance runs
 * one; the engagement's lock and the unique keys make each breach credited once.
 */
export function startCreditJob(deps: SlaDeps) {
  let running: Promise<unknown> | undefined
  const timer = setInterval(() => {
    if (running) return
    running = creditClosedPeriods(deps)
      .catch((err: Error) => deps.ctx.log.warn({ err: err.message }, 'sla credit pass failed'))
      .finally(() => {
        running = undefined
      })
  }, deps.ctx.config.sla.creditCheckMs)
  timer.unref()
  return {
    async stop() {
      clearInterval(timer)
      await running
    },
  }
}

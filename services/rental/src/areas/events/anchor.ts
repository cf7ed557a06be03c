import type { RentalContext } from '../../context.ts'
import { inTransaction } from '../../db.ts'
import {
  insertAnchor,
  latestAnchor,
  linkAt,
  lockAnchorRun,
  pendingAnchorJob,
  setAnchorRun,
  unanchoredHeads,
} from './anchor-store.ts'

export type { Anchor, AnchorTables } from './anchor-store.ts'

/** The receipt type of a published audit chain head. */
export const ANCHOR_RECEIPT = 'audit.anchored'
const ANCHOR_QUEUE = 'audit.anchor'
const PAGE = 200

/** The receipt's subject: the organization's audit chain (search the ledger by it). */
export const anchorSubject = (orgId: string) => `audit:${orgId}`

/**
 * Publishes every chain head that moved since its organization's last anchor: an `audit.anchored`
 * receipt `{org_id, seq, head}` through the outbox, in the transaction that records the anchor.
 */
export async function anchorHeads(ctx: Pick<RentalContext, 'db' | 'receipts' | 'log'>): Promise<number> {
  let anchored = 0
  const refused = new Set<string>()
  for (;;) {
    const heads = await unanchoredHeads(ctx.db, PAGE)
    for (const head of heads) {
      if (refused.has(head.org_id)) continue
      // a chain that departs from its last published head is not published over: the ledger keeps
      // the head the record had, and the verify names the place
      const last = await latestAnchor(ctx.db, head.org_id)
      const link = last ? await linkAt(ctx.db, head.org_id, last.pos) : null
      if (last && link !== null && link !== last.hash) {
        refused.add(head.org_id)
        ctx.log.warn(
          { org_id: head.org_id, pos: last.pos },
          'audit chain departs from its published head: not anchored again',
        )
        continue
      }
      await inTransaction(ctx.db, async (trx) => {
        const receipt = await ctx.receipts.record(trx, {
          type: ANCHOR_RECEIPT,
          subject: anchorSubject(head.org_id),
          data: { org_id: head.org_id, seq: Number(head.last_pos), head: head.last_hash },
        })
        await insertAnchor(trx, {
          org_id: head.org_id,
          pos: head.last_pos,
          hash: head.last_hash,
          receipt_id: receipt.id,
        })
      })
      anchored++
    }
    if (heads.length < PAGE || heads.every((h) => refused.has(h.org_id))) return anchored
  }
}

/**
 * Keeps one chain of anchoring runs, as retention's sweep does: the row names the pending run's
 * job; each run chains what has committed, anchors, then enqueues the next in the transaction that
 * names it (instances starting together make no second chain).
 */
export async function startAnchoring(ctx: RentalContext, chainCommitted: () => Promise<unknown>) {
  const { jobs } = ctx
  const every = ctx.config.auditAnchorS
  await jobs.queue(ANCHOR_QUEUE, { retryLimit: 3, expireInSeconds: 15 * 60 })
  const pendingId = pendingAnchorJob
  const schedule = async (current: string | null) =>
    inTransaction(ctx.db, async (trx) => {
      if ((await lockAnchorRun(trx)) !== current) return
      const id = await jobs.enqueue(trx, ANCHOR_QUEUE, {}, { startAfter: every })
      await setAnchorRun(trx, id, current ? ctx.now() : undefined)
    })
  await jobs.work(ANCHOR_QUEUE, async (_data, job) => {
    if ((await pendingId(ctx.db)) !== job.id) return
    try {
      await chainCommitted()
      const anchored = await anchorHeads(ctx)
      if (anchored) ctx.log.info({ anchored }, 'audit chain heads published to the ledger')
    } catch (err) {
      ctx.log.warn({ err: (err as Error).message }, 'audit anchoring failed')
    }
    await schedule(job.id)
  })
  const pending = await pendingId(ctx.db)
  const job = pending ? await jobs.job(ANCHOR_QUEUE, pending) : null
  if (!job || !['created', 'retry', 'active'].includes(job.state)) await schedule(pending)
}

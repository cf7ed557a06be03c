import type { Generated } from 'kysely'
import type { RentalContext } from '../../context.ts'
import { inTransaction, type RentalDb } from '../../db.ts'

/** The receipt type of a published audit chain head. */
export const ANCHOR_RECEIPT = 'audit.anchored'
const ANCHOR_QUEUE = 'audit.anchor'
const PAGE = 200

/** The events area's anchoring tables (migration 0048). */
export interface AnchorTables {
  rental_audit_anchors: {
    org_id: string
    pos: string
    hash: string
    receipt_id: string
    anchored_at: Generated<Date>
  }
  rental_audit_anchor_run: { id: number; job_id: string | null; last_run_at: Date | null }
}

export interface Anchor {
  pos: number
  hash: string
  receipt_id: string
  anchored_at: string
}

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
    const heads = await ctx.db
      .selectFrom('rental_audit_chains as c')
      .select(['c.org_id', 'c.last_pos', 'c.last_hash'])
      .where(({ not, exists, selectFrom }) =>
        not(
          exists(
            selectFrom('rental_audit_anchors as a')
              .select('a.pos')
              .whereRef('a.org_id', '=', 'c.org_id')
              .whereRef('a.pos', '>=', 'c.last_pos'),
          ),
        ),
      )
      .orderBy('c.org_id')
      .limit(PAGE)
      .execute()
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
        await trx
          .insertInto('rental_audit_anchors')
          .values({ org_id: head.org_id, pos: head.last_pos, hash: head.last_hash, receipt_id: receipt.id })
          .execute()
      })
      anchored++
    }
    if (heads.length < PAGE || heads.every((h) => refused.has(h.org_id))) return anchored
  }
}

/** The organization's latest anchor (null: none yet). */
export async function latestAnchor(db: RentalDb, orgId: string): Promise<Anchor | null> {
  const row = await db
    .selectFrom('rental_audit_anchors')
    .selectAll()
    .where('org_id', '=', orgId)
    .orderBy('pos', 'desc')
    .limit(1)
    .executeTakeFirst()
  return row
    ? {
        pos: Number(row.pos),
        hash: row.hash,
        receipt_id: row.receipt_id,
        anchored_at: row.anchored_at.toISOString(),
      }
    : null
}

/** The stored link at a place of the organization's chain (null: no entry there). */
export async function linkAt(db: RentalDb, orgId: string, pos: number): Promise<string | null> {
  const row = await db
    .selectFrom('rental_events')
    .select('chain_hash')
    .where('org_id', '=', orgId)
    .where('chain_pos', '=', String(pos))
    .executeTakeFirst()
  return row?.chain_hash ?? null
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
  const pendingId = async (db: RentalDb) =>
    (await db.selectFrom('rental_audit_anchor_run').select('job_id').where('id', '=', 1).executeTakeFirst())
      ?.job_id ?? null
  const schedule = async (current: string | null) =>
    inTransaction(ctx.db, async (trx) => {
      const row = await trx
        .selectFrom('rental_audit_anchor_run')
        .select('job_id')
        .where('id', '=', 1)
        .forUpdate()
        .executeTakeFirstOrThrow()
      if (row.job_id !== current) return
      const id = await jobs.enqueue(trx, ANCHOR_QUEUE, {}, { startAfter: every })
      await trx
        .updateTable('rental_audit_anchor_run')
        .set({ job_id: id, ...(current ? { last_run_at: ctx.now() } : {}) })
        .where('id', '=', 1)
        .execute()
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

import type { LedgerDb } from '../../db.ts'

/** A checkpoint note (the latest, or the one for `size`) with every cosignature line received for it. */
export async function checkpointNote(
  db: LedgerDb,
  size?: number,
): Promise<{ size: number; note: string } | undefined> {
  let query = db.selectFrom('checkpoints').select(['tree_size', 'note'])
  query =
    size === undefined ? query.orderBy('tree_size', 'desc').limit(1) : query.where('tree_size', '=', size)
  const row = await query.executeTakeFirst()
  if (!row) return undefined
  const cosignatures = await db
    .selectFrom('cosignatures')
    .select('signature_line')
    .where('tree_size', '=', row.tree_size)
    .orderBy('witness')
    .execute()
  return { size: row.tree_size, note: row.note + cosignatures.map((c) => `${c.signature_line}\n`).join('') }
}

/** The checkpointed sizes just below and just above `size` (those that exist). */
export async function checkpointSizesAround(db: LedgerDb, size: number): Promise<number[]> {
  const below = await db
    .selectFrom('checkpoints')
    .select('tree_size')
    .where('tree_size', '<', size)
    .orderBy('tree_size', 'desc')
    .limit(1)
    .executeTakeFirst()
  const above = await db
    .selectFrom('checkpoints')
    .select('tree_size')
    .where('tree_size', '>', size)
    .orderBy('tree_size')
    .limit(1)
    .executeTakeFirst()
  return [below?.tree_size, above?.tree_size].filter((s): s is number => s !== undefined)
}

export async function leafAt(db: LedgerDb, index: number) {
  return db
    .selectFrom('leaves')
    .select(['leaf_index', 'leaf_hash', 'entry', 'integrated_at'])
    .where('leaf_index', '=', index)
    .executeTakeFirst()
}

export async function leafIndexByHash(db: LedgerDb, hash: Buffer): Promise<number | undefined> {
  const row = await db
    .selectFrom('leaves')
    .select('leaf_index')
    .where('leaf_hash', '=', hash)
    .executeTakeFirst()
  return row?.leaf_index
}

/** The entries [from, from + count) in index order. */
export async function entriesFrom(db: LedgerDb, from: number, count: number): Promise<Buffer[]> {
  const rows = await db
    .selectFrom('leaves')
    .select('entry')
    .where('leaf_index', '>=', from)
    .where('leaf_index', '<', from + count)
    .orderBy('leaf_index')
    .execute()
  return rows.map((r) => r.entry)
}

export async function searchLeaves(
  db: LedgerDb,
  filter: { subject?: string; issuer?: string; after?: number; limit: number },
) {
  let query = db
    .selectFrom('leaves')
    .select(['leaf_index', 'leaf_hash', 'entry', 'integrated_at'])
    .orderBy('leaf_index')
    .limit(filter.limit)
  if (filter.subject !== undefined) query = query.where('subject', '=', filter.subject)
  if (filter.issuer !== undefined) query = query.where('issuer_did', '=', filter.issuer)
  if (filter.after !== undefined) query = query.where('leaf_index', '>', filter.after)
  return query.execute()
}

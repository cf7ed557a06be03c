import type { LedgerDb } from '../../db.ts'

/** The latest checkpoint as the log signed it (no cosignatures). */
export const latestSignedCheckpoint = async (db: LedgerDb) => {
  const row = await db
    .selectFrom('checkpoints')
    .select(['tree_size', 'note'])
    .orderBy('tree_size', 'desc')
    .limit(1)
    .executeTakeFirst()
  return row && { size: Number(row.tree_size), note: row.note }
}

/** The largest tree size a witness (by key name) has cosigned here; 0 if none. */
export async function sizeCosignedBy(db: LedgerDb, witness: string): Promise<number> {
  const row = await db
    .selectFrom('cosignatures')
    .select((eb) => eb.fn.max('tree_size').as('size'))
    .where('witness', '=', witness)
    .executeTakeFirst()
  return Number(row?.size ?? 0)
}

import type { Generated } from 'kysely'
import type { LedgerDb } from '../../db.ts'

/** The witness area's table: the cosignatures witnesses gave the log's checkpoints. */
export interface WitnessTables {
  cosignatures: {
    tree_size: number
    witness: string
    signature_line: string
    cosigned_at: Date
    received_at: Generated<Date>
  }
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

/** Keeps a witness's cosignature of a size (a newer one replaces it). */
export async function keepCosignature(
  db: LedgerDb,
  c: { size: number; witness: string; line: string; at: Date },
) {
  await db
    .insertInto('cosignatures')
    .values({ tree_size: c.size, witness: c.witness, signature_line: c.line, cosigned_at: c.at })
    .onConflict((oc) =>
      oc
        .columns(['tree_size', 'witness'])
        .doUpdateSet({ signature_line: c.line, cosigned_at: c.at, received_at: new Date() }),
    )
    .execute()
}

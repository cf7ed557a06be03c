import type { Generated } from 'kysely'
import { sql } from 'kysely'
import type { IdpDb, IdpTables } from '../../db.ts'

/** The tables of the witness area. */
export interface WitnessTables {
  witness_logs: {
    origin: string
    verifier_key: string
    tree_size: Generated<number>
    root_hash: Buffer | null
    checkpoint: string | null
    updated_at: Generated<Date>
  }
  witness_cosignatures: {
    id: Generated<number>
    origin: string
    tree_size: number
    root_hash: Buffer
    checkpoint: string
    cosigned_at: Date
  }
  witness_evidence: {
    id: Generated<number>
    origin: string
    kind: 'fork' | 'inconsistent'
    cosigned_checkpoint: string
    presented_request: string
    observed_at: Generated<Date>
  }
}

export interface LogState {
  size: number
  rootHash: Buffer | null
  checkpoint: string | null
}

export async function trustedKeyOf(db: IdpDb, origin: string): Promise<string | undefined> {
  const row = await db
    .selectFrom('witness_logs')
    .select('verifier_key')
    .where('origin', '=', origin)
    .executeTakeFirst()
  return row?.verifier_key
}

/** Pins a log's key at first contact; a key pinned earlier stays (and is returned). */
export async function pinLog(db: IdpDb, origin: string, verifierKey: string): Promise<string> {
  await db
    .insertInto('witness_logs')
    .values({ origin, verifier_key: verifierKey })
    .onConflict((oc) => oc.column('origin').doNothing())
    .execute()
  return (await trustedKeyOf(db, origin))!
}

/** The log's state, its row locked until the transaction ends (made at size 0 on first contact). */
export async function lockLog(trx: IdpDb, origin: string, verifierKey: string): Promise<LogState> {
  await trx
    .insertInto('witness_logs')
    .values({ origin, verifier_key: verifierKey })
    .onConflict((oc) => oc.column('origin').doUpdateSet({ verifier_key: verifierKey }))
    .execute()
  const row = await trx
    .selectFrom('witness_logs')
    .select(['tree_size', 'root_hash', 'checkpoint'])
    .where('origin', '=', origin)
    .forUpdate()
    .executeTakeFirstOrThrow()
  return { size: Number(row.tree_size), rootHash: row.root_hash, checkpoint: row.checkpoint }
}

export async function recordCosignature(
  trx: IdpDb,
  c: { origin: string; size: number; rootHash: Uint8Array; checkpoint: string },
): Promise<void> {
  const root = Buffer.from(c.rootHash)
  await trx
    .updateTable('witness_logs')
    .set({ tree_size: c.size, root_hash: root, checkpoint: c.checkpoint, updated_at: sql`now()` })
    .where('origin', '=', c.origin)
    .execute()
  await trx
    .insertInto('witness_cosignatures')
    .values({
      origin: c.origin,
      tree_size: c.size,
      root_hash: root,
      checkpoint: c.checkpoint,
      cosigned_at: new Date(),
    })
    .execute()
}

export async function recordEvidence(
  db: IdpDb,
  evidence: Omit<IdpTables['witness_evidence'], 'id' | 'observed_at'>,
): Promise<void> {
  await db.insertInto('witness_evidence').values(evidence).execute()
}

export const witnessedLogs = (db: IdpDb) =>
  db
    .selectFrom('witness_logs')
    .select(['origin', 'verifier_key', 'tree_size', 'root_hash', 'checkpoint', 'updated_at'])
    .where('checkpoint', 'is not', null)
    .orderBy('origin')
    .execute()

export const splitViewEvidence = (db: IdpDb) =>
  db.selectFrom('witness_evidence').selectAll().orderBy('id').limit(100).execute()

/** Cosignatures in the order given, after `since` (a time, or a tree size), at most `limit`. */
export async function cosignaturesSince(
  db: IdpDb,
  since: { time: Date } | { size: number } | undefined,
  limit: number,
) {
  let query = db
    .selectFrom('witness_cosignatures')
    .select(['id', 'origin', 'tree_size', 'root_hash', 'checkpoint', 'cosigned_at'])
  if (since && 'time' in since) query = query.where('cosigned_at', '>', since.time)
  if (since && 'size' in since) query = query.where('tree_size', '>', since.size)
  return query.orderBy('cosigned_at').orderBy('id').limit(limit).execute()
}

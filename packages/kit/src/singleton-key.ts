import { randomBytes } from 'node:crypto'
import { didKeyFromEd25519 } from '@svc/trust/did-key'
import { ed25519FromSeed } from '@svc/trust/ed25519'
import { type Kysely, sql } from 'kysely'
import type { Sealer } from './sealing.ts'

/** Where a service keeps one sealed secret: the column of the row `id = 1` of a one-row table. */
export interface SingletonKeySpec {
  table: string
  /** The column holding the sealed secret. */
  column: string
  /** The sealing context: a sealed value copied to another column or table does not open. */
  context: string
  /**
   * The other columns of a new row, from the new secret (a did:key's `did`, say). Without it the
   * row must exist already, and only its empty `column` is filled.
   */
  row?: (secret: Uint8Array) => Record<string, unknown>
}

// a one-row table of any service: its name comes from the caller's code, never from a request
// eslint-disable-next-line @typescript-eslint/no-explicit-any
type AnyDb = Kysely<any>

/**
 * Make a key once and seal it: a 32-byte secret made on first start, sealed in the database, the
 * same ever after and on every instance. Instances starting together each propose a secret; the
 * database keeps the first (`ON CONFLICT DO NOTHING`, or an update only where the column is empty)
 * and every instance reads back the one kept.
 */
export async function singletonKey(db: AnyDb, sealer: Sealer, spec: SingletonKeySpec): Promise<Uint8Array> {
  const fresh = randomBytes(32)
  const sealed = sealer.seal(fresh, spec.context)
  if (spec.row)
    await db
      .insertInto(spec.table)
      .values({ ...spec.row(fresh), id: 1, [spec.column]: sealed })
      .onConflict((oc) => oc.column('id').doNothing())
      .execute()
  else
    await db
      .updateTable(spec.table)
      .set({ [spec.column]: sealed })
      .where('id', '=', 1)
      .where(sql.ref(spec.column), 'is', null)
      .execute()
  const kept = await db
    .selectFrom(spec.table)
    .select(sql<Buffer | null>`${sql.ref(spec.column)}`.as('sealed'))
    .where('id', '=', 1)
    .executeTakeFirst()
  if (!kept?.sealed) throw new Error(`${spec.table}.${spec.column}: no row id = 1 to keep the key in`)
  return new Uint8Array(sealer.open(kept.sealed, spec.context))
}

/** A service's own did:key (Ed25519), made once and sealed: its `did` column is checked against the key. */
export async function singletonDidKey(
  db: AnyDb,
  sealer: Sealer,
  spec: { table: string; context: string; column?: string },
): Promise<{ did: string; seed: Uint8Array }> {
  const didOf = (seed: Uint8Array) => didKeyFromEd25519(ed25519FromSeed(seed).publicKey)
  const seed = await singletonKey(db, sealer, {
    table: spec.table,
    column: spec.column ?? 'seed_sealed',
    context: spec.context,
    row: (secret) => ({ did: didOf(secret) }),
  })
  const row = await db.selectFrom(spec.table).select('did').where('id', '=', 1).executeTakeFirstOrThrow()
  if (didOf(seed) !== row.did) throw new Error(`the stored key of ${spec.table} does not match its did`)
  return { did: row.did as string, seed }
}

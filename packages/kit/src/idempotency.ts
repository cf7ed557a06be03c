import { createHash } from 'node:crypto'
import { type ColumnType, type Generated, type Kysely, type Transaction } from 'kysely'
import { Type } from 'typebox'
import { canonicalize } from '@svc/trust/jcs'
import { AppError } from './errors.ts'

/**
 * The answers kept for idempotent writes, one row per (owner, scope, key). The table is the
 * kit's, like the receipt outbox: a service creates it in a migration and includes
 * `IdempotencyTables` in its table types.
 */
export interface IdempotencyTables {
  idempotent_answers: {
    client_subject: string
    scope: string
    key: string
    request_digest: string
    status: number
    body: ColumnType<unknown, string, string>
    created_at: Generated<Date>
  }
}

// eslint-disable-next-line @typescript-eslint/no-explicit-any -- the table lives in any service's schema
type AnyDb = Kysely<any> | Transaction<any>

/** The request header (RFC draft-ietf-httpapi-idempotency-key-header), as a route's `headers` schema. */
export const IdempotencyKeyHeader = Type.Object({
  'idempotency-key': Type.Optional(Type.String({ minLength: 1, maxLength: 200 })),
})

/** The status of a key reused for another request: 422 (the IETF draft's Unprocessable Content). */
export const KEY_REUSED_STATUS = 422

/** SHA-256 of the JCS form of a request: what a replay must match. */
export const requestDigest = (request: unknown) =>
  createHash('sha256').update(canonicalize(request)).digest('hex')

export interface KeptAnswer {
  digest: string
  status: number
  body: unknown
}

/** The answer kept under (owner, scope, key), if any. */
export async function keptAnswer(
  db: AnyDb,
  owner: string,
  scope: string,
  key: string,
): Promise<KeptAnswer | undefined> {
  const row = await db
    .selectFrom('idempotent_answers')
    .select(['request_digest', 'status', 'body'])
    .where('client_subject', '=', owner)
    .where('scope', '=', scope)
    .where('key', '=', key)
    .executeTakeFirst()
  return row && { digest: row.request_digest, status: Number(row.status), body: row.body }
}

/** Keeps an answer unless one is kept already under the same key; true when this one was kept. */
export async function keepAnswer(
  db: AnyDb,
  row: { owner: string; scope: string; key: string; digest: string; status: number; body: unknown },
): Promise<boolean> {
  const inserted = await db
    .insertInto('idempotent_answers')
    .values({
      client_subject: row.owner,
      scope: row.scope,
      key: row.key,
      request_digest: row.digest,
      status: row.status,
      body: JSON.stringify(row.body),
    })
    .onConflict((oc) => oc.columns(['client_subject', 'scope', 'key']).doNothing())
    .returning('key')
    .executeTakeFirst()
  return inserted !== undefined
}

export interface IdempotentRequest {
  /** Whose key it is: keys of different owners never meet. */
  owner: string
  /** The operation and its object, e.g. `release:<engagement id>`. */
  scope: string
  /** The `Idempotency-Key` header; without one the write simply runs. */
  key: string | undefined
  /** The request as the client sent it (digested: a replay must send the same). */
  request: unknown
  /** The status of a key reused for another request (default 422; a route may keep its published one). */
  reusedStatus?: number
}

export interface IdempotentAnswer<B> {
  status: number
  body: B
  /** True when this is the first answer given again. */
  replayed: boolean
}

class AnswerKeptMeanwhile extends Error {}

function replayed<B>(request: IdempotentRequest, digest: string, kept: KeptAnswer): IdempotentAnswer<B> {
  if (kept.digest !== digest)
    throw new AppError(
      request.reusedStatus ?? KEY_REUSED_STATUS,
      'idempotency_key_reused',
      'this Idempotency-Key was used for another request',
    )
  return { status: kept.status, body: kept.body as B, replayed: true }
}

/**
 * The answer kept for the request's key, given again; `idempotency_key_reused` when it was kept
 * for another request; undefined when none is kept (or no key given). `idempotentWrite` asks it
 * first; a route calls it itself when a replay must be answered before the request is checked
 * against the current state (a release whose escrow has since changed answers its first answer).
 */
export async function replayOf<B>(
  db: AnyDb,
  request: IdempotentRequest,
): Promise<IdempotentAnswer<B> | undefined> {
  if (request.key === undefined) return undefined
  const kept = await keptAnswer(db, request.owner, request.scope, request.key)
  return kept && replayed<B>(request, requestDigest(request.request), kept)
}

/**
 * An idempotent write. With a key: a kept answer under it is given again (status and body), or,
 * when it was kept for another request, `idempotency_key_reused`; else `write` runs in a
 * transaction and its answer is kept in that same transaction, so a write is never done without
 * its answer kept. Of two concurrent first requests with one key, one commits; the other is
 * rolled back and answered the first one's answer.
 */
export async function idempotentWrite<DB extends IdempotencyTables, B>(
  db: Kysely<DB>,
  request: IdempotentRequest,
  write: (trx: Transaction<DB>) => Promise<{ status: number; body: B }>,
): Promise<IdempotentAnswer<B>> {
  const kdb = db as unknown as Kysely<IdempotencyTables>
  const run = (trx: Transaction<IdempotencyTables>) => write(trx as unknown as Transaction<DB>)
  if (request.key === undefined) return { ...(await kdb.transaction().execute(run)), replayed: false }
  const { owner, scope, key } = request
  const digest = requestDigest(request.request)
  const replay = (kept: KeptAnswer) => replayed<B>(request, digest, kept)
  const earlier = await keptAnswer(kdb, owner, scope, key)
  if (earlier) return replay(earlier)
  try {
    const answer = await kdb.transaction().execute(async (trx) => {
      const done = await run(trx)
      if (!(await keepAnswer(trx, { owner, scope, key, digest, ...done }))) throw new AnswerKeptMeanwhile()
      return done
    })
    return { ...answer, replayed: false }
  } catch (err) {
    if (!(err instanceof AnswerKeptMeanwhile)) throw err
    return replay((await keptAnswer(kdb, owner, scope, key))!)
  }
}

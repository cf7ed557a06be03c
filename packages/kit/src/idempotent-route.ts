import { setTimeout as sleep } from 'node:timers/promises'
import type { FastifyReply, FastifyRequest } from 'fastify'
import { type Kysely, sql, type Transaction } from 'kysely'
import { AppError } from './errors.ts'
import { KEY_REUSED_STATUS, requestDigest } from './idempotency.ts'

// eslint-disable-next-line @typescript-eslint/no-explicit-any -- the table lives in any service's schema
type AnyDb = Kysely<any> | Transaction<any>

/** The `status` of a key claimed by a request still running (no answer kept yet). */
export const IN_FLIGHT = 0

export interface IdempotentRouteOptions {
  db: AnyDb
  /** The operation, e.g. `task-create`; a key is another route's key under another scope. */
  scope: string
  /** Whose keys (after authentication): keys of different owners never meet. */
  owner: (request: FastifyRequest) => string
  /** How long a duplicate sent while the first runs waits for its answer before 409 (default 10 s). */
  waitMs?: number
  /**
   * How old an unanswered claim must be to be taken for a crashed process's and claimed again
   * (default 5 min, longer than any request runs).
   */
  leaseMs?: number
}

interface Claim {
  owner: string
  scope: string
  key: string
}

const claims = new WeakMap<FastifyRequest, Claim>()

/**
 * The request as a replay must repeat it: its path parameters, query and body, whatever their
 * fields (as JSON: Fastify's parameters and query are objects without a prototype).
 */
const digestOf = (request: FastifyRequest) =>
  requestDigest(
    JSON.parse(
      JSON.stringify({
        params: request.params ?? {},
        query: request.query ?? {},
        body: request.body ?? null,
      }),
    ),
  )

async function claimKey(db: AnyDb, claim: Claim, digest: string): Promise<boolean> {
  const row = await db
    .insertInto('idempotent_answers')
    .values({
      client_subject: claim.owner,
      scope: claim.scope,
      key: claim.key,
      request_digest: digest,
      status: IN_FLIGHT,
      body: 'null',
    })
    .onConflict((oc) => oc.columns(['client_subject', 'scope', 'key']).doNothing())
    .returning('key')
    .executeTakeFirst()
  return row !== undefined
}

const kept = (db: AnyDb, claim: Claim) =>
  db
    .selectFrom('idempotent_answers')
    .select(['request_digest', 'status', 'body'])
    .where('client_subject', '=', claim.owner)
    .where('scope', '=', claim.scope)
    .where('key', '=', claim.key)
    .executeTakeFirst() as Promise<{ request_digest: string; status: number; body: unknown } | undefined>

/**
 * Takes over an unanswered claim older than the lease (its process died); true when this request
 * did. The row lock makes one of two concurrent takeovers see the other's fresh `created_at`.
 */
async function takeOver(db: AnyDb, claim: Claim, leaseMs: number): Promise<boolean> {
  const taken = await db
    .updateTable('idempotent_answers')
    .set({ created_at: sql`now()` })
    .where('client_subject', '=', claim.owner)
    .where('scope', '=', claim.scope)
    .where('key', '=', claim.key)
    .where('status', '=', IN_FLIGHT)
    .where('created_at', '<', sql<Date>`now() - ${leaseMs} * interval '1 millisecond'`)
    .returning('key')
    .executeTakeFirst()
  return taken !== undefined
}

/**
 * Route options that make a creating write idempotent with an `Idempotency-Key` header
 * (draft-ietf-httpapi-idempotency-key-header, as Stripe does), whatever the route's body: spread
 * them into the route's options, next to `headers: IdempotencyKeyHeader` in its schema.
 *
 * After authentication and validation (`preHandler`), the key is claimed: a row in
 * `idempotent_answers` with no answer yet. The same key again with the same request (path
 * parameters, query and body) answers the first answer (status and body, `Idempotent-Replayed:
 * true`); with another request, 422 `idempotency_key_reused`; while the first still runs, it waits
 * for its answer (`waitMs`), then 409 `idempotency_key_in_flight` with `Retry-After`. So concurrent
 * duplicates settle on one write and one answer. When the route answers (`onSend`), a success is
 * kept under the key; an error gives the key up (the write changed nothing), so a resend after a
 * 503 runs again. A claim left unanswered by a process that died is taken over after `leaseMs`.
 */
export function idempotentRoute(options: IdempotentRouteOptions) {
  const { db, scope } = options
  const waitMs = options.waitMs ?? 10_000
  const leaseMs = options.leaseMs ?? 5 * 60_000
  const preHandler = async (request: FastifyRequest, reply: FastifyReply) => {
    const key = request.headers['idempotency-key']
    if (typeof key !== 'string') return
    const claim = { owner: options.owner(request), scope, key }
    const digest = digestOf(request)
    const deadline = Date.now() + waitMs
    for (;;) {
      if (await claimKey(db, claim, digest)) {
        claims.set(request, claim)
        return
      }
      const row = await kept(db, claim)
      // given up meanwhile (the first request failed): claim it again
      if (!row) continue
      if (row.request_digest !== digest)
        throw new AppError(
          KEY_REUSED_STATUS,
          'idempotency_key_reused',
          'this Idempotency-Key was used for another request',
        )
      if (Number(row.status) !== IN_FLIGHT)
        return reply.code(Number(row.status)).header('idempotent-replayed', 'true').send(row.body)
      if (await takeOver(db, claim, leaseMs)) {
        claims.set(request, claim)
        return
      }
      if (Date.now() >= deadline)
        throw new AppError(
          409,
          'idempotency_key_in_flight',
          'a request with this Idempotency-Key is still running: send it again later for its answer',
          { 'retry-after': '1' },
        )
      await sleep(50)
    }
  }
  const onSend = async (request: FastifyRequest, reply: FastifyReply, payload: unknown) => {
    const claim = claims.get(request)
    if (!claim) return payload
    claims.delete(request)
    const where = db
      .updateTable('idempotent_answers')
      .where('client_subject', '=', claim.owner)
      .where('scope', '=', claim.scope)
      .where('key', '=', claim.key)
      .where('status', '=', IN_FLIGHT)
    try {
      if (reply.statusCode >= 200 && reply.statusCode < 300 && typeof payload === 'string')
        await where.set({ status: reply.statusCode, body: payload }).execute()
      else
        await db
          .deleteFrom('idempotent_answers')
          .where('client_subject', '=', claim.owner)
          .where('scope', '=', claim.scope)
          .where('key', '=', claim.key)
          .where('status', '=', IN_FLIGHT)
          .execute()
    } catch (err) {
      // the answer goes out anyway; the claim stays unanswered until its lease ends
      request.log.warn({ err, scope: claim.scope }, 'the answer of an idempotent request was not kept')
    }
    return payload
  }
  return { preHandler: [preHandler], onSend: [onSend] }
}

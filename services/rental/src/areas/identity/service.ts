import { createHash, createHmac, timingSafeEqual } from 'node:crypto'
import { inTransaction, type RentalDb } from '../../db.ts'
import { rentalError } from '../../errors.ts'
import type { AuthService } from '../auth/index.ts'
import { SYSTEM, type EventService } from '../events/index.ts'
import type { ErasureService } from '../erasure/index.ts'
import type { OrgService } from '../orgs/index.ts'
import type { RetentionService } from '../retention/index.ts'
import type { TokenService } from '../tokens/index.ts'
import { firstReceipt } from './store.ts'

export interface IdentityDeps {
  db: RentalDb
  auth: AuthService
  orgs: OrgService
  tokens: TokenService
  events: EventService
  retention: RetentionService
  erasure: ErasureService
}

/** The idp's lifecycle events this service acts on (identity-provider.md, Lifecycle webhooks). */
const HANDLED = ['user.deleted', 'user.password_changed', 'consent.revoked', 'user.email_changed'] as const
type Handled = (typeof HANDLED)[number]

export interface IdentityEvent {
  event: string
  sub: string
  occurred_at: string
  data: Record<string, unknown>
}

/**
 * `X-Svc-Signature: sha256=<hex HMAC-SHA256 of the exact body>` under the webhook secret the idp
 * gave our client, compared in constant time before the body is parsed. 403 otherwise.
 */
export function checkSignature(secret: string | undefined, body: Buffer, header: unknown) {
  const refuse = (why: string) => rentalError('invalid_event_signature', why)
  if (!secret) throw refuse('no webhook secret is known for the idp client yet: the event cannot be checked')
  if (typeof header !== 'string' || !header.startsWith('sha256='))
    throw refuse('X-Svc-Signature is missing or not of the form sha256=<hex>')
  const expected = createHmac('sha256', secret).update(body).digest()
  const given = Buffer.from(header.slice('sha256='.length), 'hex')
  if (given.length !== expected.length || !timingSafeEqual(given, expected))
    throw refuse('X-Svc-Signature is not the HMAC-SHA256 of this body')
}

/** The body, parsed and checked against the idp's shape `{event, sub, occurred_at, data}`; 400 otherwise. */
export function parseEvent(body: Buffer): IdentityEvent {
  const bad = (why: string) => rentalError('invalid_identity_event', why)
  let value: unknown
  try {
    value = JSON.parse(body.toString('utf8'))
  } catch {
    throw bad('the body is not JSON')
  }
  if (!value || typeof value !== 'object' || Array.isArray(value)) throw bad('the body is not a JSON object')
  const { event, sub, occurred_at: at, data } = value as Record<string, unknown>
  if (typeof event !== 'string' || event.length < 1 || event.length > 100)
    throw bad('event must be a string of 1 to 100 characters')
  if (typeof sub !== 'string' || sub.length < 1 || sub.length > 255)
    throw bad('sub must be a string of 1 to 255 characters')
  if (typeof at !== 'string' || at.length > 40 || Number.isNaN(Date.parse(at)))
    throw bad('occurred_at must be a date-time')
  if (data !== undefined && (data === null || typeof data !== 'object' || Array.isArray(data)))
    throw bad('data must be an object')
  return { event, sub, occurred_at: at, data: (data ?? {}) as Record<string, unknown> }
}

const isHandled = (event: string): event is Handled => (HANDLED as readonly string[]).includes(event)

export type IdentityOutcome =
  { status: 202; body: { event: string; handled: false } } | { status: 200; body: Record<string, unknown> }

/**
 * Acts on one checked event, once per body (a replay of the same body answers `replay: true`
 * and changes nothing): sessions ended and the member's tokens revoked (deleted, password
 * changed, consent revoked), the member leaving its organization (deleted; the last owner is
 * kept and the event says so), the member's email updated (email changed). Recorded as
 * `member.identity_event` in the same transaction.
 */
export async function handleEvent(
  deps: IdentityDeps,
  body: Buffer,
  e: IdentityEvent,
): Promise<IdentityOutcome> {
  if (!isHandled(e.event)) return { status: 202, body: { event: e.event, handled: false } }
  const event = e.event
  const email = typeof e.data.email === 'string' && e.data.email.length <= 320 ? e.data.email : null
  if (event === 'user.email_changed' && !email)
    throw rentalError('invalid_identity_event', 'data.email is missing')
  let lastOwnerOf: string | null = null
  const outcome = await inTransaction(deps.db, async (trx): Promise<IdentityOutcome> => {
    const fresh = await firstReceipt(trx, {
      body_hash: createHash('sha256').update(body).digest(),
      event,
      subject: e.sub,
      occurred_at: new Date(e.occurred_at),
    })
    if (!fresh) return { status: 200, body: { event, handled: true, replay: true } }
    const member = await deps.orgs.memberOfSubject(trx, e.sub)
    const result: Record<string, unknown> = { event, handled: true, replay: false }
    if (event === 'user.email_changed') {
      await deps.orgs.changeEmailByIdentity(trx, e.sub, email!)
      result.email = email
    } else {
      result.sessions_ended = await deps.auth.endSessionsOf(trx, e.sub)
      result.tokens_revoked = member ? await deps.tokens.revokeCreatedBy(trx, member.id) : 0
      if (event === 'user.deleted') {
        const left = await deps.orgs.leaveByIdentity(trx, SYSTEM, e.sub)
        result.membership = left.outcome
        if (left.outcome === 'kept_last_owner') lastOwnerOf = left.orgId
      }
    }
    await deps.events.record(trx, {
      orgId: member?.org_id ?? null,
      type: 'member.identity_event',
      ...(member ? { subjects: { member_id: member.id } } : {}),
      actor: SYSTEM,
      data: { ...result, subject: e.sub, occurred_at: e.occurred_at },
    })
    return { status: 200, body: result }
  })
  // the last owner is gone: the organization erased if it asked for that, after the event committed
  if (lastOwnerOf && (await deps.retention.erasesOnOwnerDeletion(lastOwnerOf)))
    (outcome.body as Record<string, unknown>).erasure = await deps.erasure.eraseForDeletedOwner(
      lastOwnerOf,
      SYSTEM,
    )
  return outcome
}

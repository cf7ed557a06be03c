import { randomBytes } from 'node:crypto'
import { type Jobs } from '@svc/kit'
import type { IdpDb, IdpTables } from '../../db.ts'
import { subjectFor } from '../../oauth/subject.ts'
import type { SigningKeys } from '../keys/service.ts'
import {
  backlog,
  backlogSize,
  eventById,
  insertEvent,
  markDelivered,
  setToken,
  streamOf,
  streamsFor,
} from './store.ts'
import { idpError } from '../../errors.ts'
import { postToCaller } from '../../outbound.ts'

export const SSF_PUSH_QUEUE = 'ssf.push'
const CAEP = 'https://schemas.openid.net/secevent/caep/event-type/'
const RISC = 'https://schemas.openid.net/secevent/risc/event-type/'
/** The events this transmitter sends (identity-provider.md, Shared signals). */
export const EVENT_TYPES = {
  'session-revoked': `${CAEP}session-revoked`,
  'credential-change': `${CAEP}credential-change`,
  'token-claims-change': `${CAEP}token-claims-change`,
  'account-disabled': `${RISC}account-disabled`,
  'account-purged': `${RISC}account-purged`,
} as const
export type Signal = keyof typeof EVENT_TYPES

export interface SignalDeps {
  db: IdpDb
  jobs: Jobs
  keys: SigningKeys
  issuer: string
  pairwiseSalt: string
  retryDelayS: number
  /** IDP_FETCH_ALLOW_PRIVATE: push endpoints may be http and private (never a metadata address). */
  allowPrivate: boolean
}

type Receiver = Pick<IdpTables['clients'], 'client_id' | 'subject_type' | 'redirect_uris' | 'organization_id'>

/**
 * Records a security event for each of `receivers` that has a stream, in the caller's
 * transaction: a SET (RFC 8417) whose claims are fixed now, `sub_id` in the receiver's own
 * subject namespace (iss_sub with its pairwise `sub`). Pushed streams get a delivery job;
 * polled ones find it waiting. It is signed when first sent, outside any transaction.
 */
export async function emit(
  deps: SignalDeps,
  trx: IdpDb,
  userId: string,
  signal: Signal,
  receivers: Receiver[],
  details: Record<string, unknown> = {},
) {
  const streams = await streamsFor(
    trx,
    receivers.map((r) => r.client_id),
  )
  const iat = Math.floor(Date.now() / 1000)
  for (const stream of streams) {
    const receiver = receivers.find((r) => r.client_id === stream.client_id)!
    const jti = randomBytes(16).toString('base64url')
    const claims = {
      iss: deps.issuer,
      jti,
      iat,
      aud: receiver.client_id,
      sub_id: { format: 'iss_sub', iss: deps.issuer, sub: subjectFor(receiver, userId, deps.pairwiseSalt) },
      events: {
        [EVENT_TYPES[signal]]: signal.startsWith('account-') ? details : { event_timestamp: iat, ...details },
      },
    }
    await insertEvent(trx, { jti, client_id: receiver.client_id, event_type: signal, claims })
    if (stream.delivery === 'push') await deps.jobs.enqueue(trx, SSF_PUSH_QUEUE, { jti })
  }
}

/** The event's SET, signed (typ secevent+jwt) the first time it is needed and the same bytes ever after. */
async function signed(
  deps: SignalDeps,
  event: { jti: string; claims: Record<string, unknown>; token: string | null },
) {
  if (event.token) return event.token
  const token = await deps.keys.sign(event.claims, 'RS256', 'secevent+jwt')
  await setToken(deps.db, event.jti, token)
  return token
}

/** RFC 8935: POSTs the SET; the receiver accepts it with 202 (any 2XX), and anything else is retried. */
async function push(deps: SignalDeps, jti: string) {
  const event = await eventById(deps.db, jti)
  const stream = event && !event.delivered_at ? await streamOf(deps.db, event.client_id) : undefined
  if (!event || !stream || stream.delivery !== 'push' || !stream.endpoint_url) return
  const outcome = await postToCaller(stream.endpoint_url, {
    headers: { 'content-type': 'application/secevent+jwt', accept: 'application/json' },
    body: await signed(deps, event),
    allowPrivate: deps.allowPrivate,
    timeoutMs: 10_000,
  })
  if (outcome.error) throw new Error(`the SET receiver: ${outcome.error}`)
  await markDelivered(deps.db, event.client_id, [jti])
}

export async function startSignalDelivery(deps: SignalDeps) {
  await deps.jobs.queue(SSF_PUSH_QUEUE, { retryLimit: 7, retryDelay: deps.retryDelayS, retryBackoff: true })
  await deps.jobs.work<{ jti: string }>(SSF_PUSH_QUEUE, (data) => push(deps, data.jti))
}

/**
 * RFC 8936 §2.4: acknowledges the `ack`ed SETs, then answers up to `maxEvents` waiting ones as
 * `{sets: {jti: SET}, moreAvailable}`. For a client whose stream is polled.
 */
export async function poll(
  deps: SignalDeps,
  clientId: string,
  request: { ack?: string[]; maxEvents?: number },
) {
  const stream = await streamOf(deps.db, clientId)
  if (stream?.delivery !== 'poll')
    throw idpError('invalid_request', 'this client has no polled stream: POST /ssf/stream with delivery=poll')
  await markDelivered(deps.db, clientId, request.ack ?? [])
  const max = request.maxEvents ?? 100
  const waiting = await backlog(deps.db, clientId, max + 1)
  const sets: Record<string, string> = {}
  for (const event of waiting.slice(0, max)) sets[event.jti] = await signed(deps, event)
  return { sets, moreAvailable: waiting.length > max }
}

export async function status(deps: SignalDeps, clientId: string) {
  const stream = await streamOf(deps.db, clientId)
  if (!stream) return { status: 'disabled', backlog: 0 }
  return {
    status: 'enabled',
    delivery: stream.delivery,
    ...(stream.endpoint_url ? { endpoint_url: stream.endpoint_url } : {}),
    backlog: await backlogSize(deps.db, clientId),
  }
}

/** SSF 1.0 §7.1 transmitter metadata. */
export const ssfConfiguration = (issuer: string) => ({
  spec_version: '1_0',
  issuer,
  jwks_uri: `${issuer}/.well-known/jwks.json`,
  delivery_methods_supported: ['urn:ietf:rfc:8935', 'urn:ietf:rfc:8936'],
  configuration_endpoint: `${issuer}/ssf/stream`,
  status_endpoint: `${issuer}/ssf/status`,
  poll_endpoint: `${issuer}/ssf/poll`,
  events_supported: Object.values(EVENT_TYPES),
  authorization_schemes: [{ spec_urn: 'urn:ietf:rfc:6749' }],
  default_subjects: 'ALL',
})

import { randomBytes } from 'node:crypto'
import type { Jobs } from '@svc/kit'
import { emit, type SignalDeps } from '../signals/index.ts'
import type { FastifyBaseLogger } from 'fastify'
import type { IdpDb } from '../../db.ts'
import { subjectFor } from '../../oauth/subject.ts'
import type { AuthorizeService } from '../authorize/index.ts'
import type { ClientsService } from '../clients/index.ts'
import type { DeviceService } from '../device/index.ts'
import type { SigningKeys } from '../keys/service.ts'
import { postToCaller } from '../../outbound.ts'

export const BACKCHANNEL_EVENT = 'http://schemas.openid.net/event/backchannel-logout'

export interface LogoutDeps {
  db: IdpDb
  keys: SigningKeys
  issuer: string
  pairwiseSalt: string
  log: FastifyBaseLogger
  jobs: Jobs
  signals: SignalDeps
  /** IDP_FETCH_ALLOW_PRIVATE: logout URIs may be http and private (never a metadata address). */
  allowPrivate: boolean
  authorize: AuthorizeService
  device: DeviceService
  clients: ClientsService
}

/** The clients that received tokens in a session: the ones to tell when it ends. */
async function clientsOfSession(deps: LogoutDeps, sid: string) {
  const { db } = deps
  // the clients that got tokens in this session: by a code, or by a device code
  const ids = new Set([
    ...(await deps.authorize.clientIdsOfSession(db, sid)),
    ...(await deps.device.clientIdsOfSession(db, sid)),
  ])
  return deps.clients.anyAmong(
    db,
    [...ids],
    [
      'client_id',
      'subject_type',
      'redirect_uris',
      'backchannel_logout_uri',
      'frontchannel_logout_uri',
      'organization_id',
    ],
  )
}

export const BACKCHANNEL_QUEUE = 'logout.backchannel'

interface BackchannelJob {
  client_id: string
  sid: string
  user_id: string
}

/** Declares the delivery queue and its worker: eight attempts over about four minutes. */
export async function startBackchannelDelivery(deps: LogoutDeps) {
  await deps.jobs.queue(BACKCHANNEL_QUEUE, { retryLimit: 7, retryDelay: 2, retryBackoff: true })
  await deps.jobs.work<BackchannelJob>(BACKCHANNEL_QUEUE, (job) => deliverLogoutToken(deps, job), {
    pollingIntervalSeconds: 0.5,
  })
}

/**
 * OpenID Connect Back-Channel Logout 1.0 §2.4-2.5: a signed logout token (typ logout+jwt, `events`,
 * `sid`, the client's own `sub`, no `nonce`) POSTed as a form; anything but a 2XX fails the attempt.
 */
async function deliverLogoutToken(deps: LogoutDeps, job: BackchannelJob) {
  const client = await deps.clients.anyById(deps.db, job.client_id, [
    'client_id',
    'subject_type',
    'redirect_uris',
    'organization_id',
    'backchannel_logout_uri',
  ])
  if (!client?.backchannel_logout_uri) return
  const now = Math.floor(Date.now() / 1000)
  const logoutToken = await deps.keys.sign(
    {
      iss: deps.issuer,
      aud: client.client_id,
      iat: now,
      exp: now + 120,
      jti: randomBytes(16).toString('base64url'),
      sub: subjectFor(client, job.user_id, deps.pairwiseSalt),
      sid: job.sid,
      events: { [BACKCHANNEL_EVENT]: {} },
    },
    'RS256',
    'logout+jwt',
  )
  // through the outbound guard again (the address checked and pinned); a redirect is never followed
  const outcome = await postToCaller(client.backchannel_logout_uri, {
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams({ logout_token: logoutToken }).toString(),
    allowPrivate: deps.allowPrivate,
    timeoutMs: 5_000,
  })
  if (outcome.error) {
    deps.log.warn({ client: client.client_id, status: outcome.status }, 'back-channel logout refused')
    throw new Error(`the back-channel logout URI: ${outcome.error}`)
  }
}

/**
 * Tells every client that received tokens in the session that it ended: a durable back-channel
 * delivery job each, and the front-channel URIs (with `iss` and `sid`) for the signed-out page to load.
 */
export async function announceLogout(
  deps: LogoutDeps,
  session: { sid: string; user_id: string },
): Promise<string[]> {
  const clients = await clientsOfSession(deps, session.sid)
  await emit(deps.signals, deps.db, session.user_id, 'session-revoked', clients)
  for (const client of clients.filter((c) => c.backchannel_logout_uri))
    await deps.jobs.enqueue(deps.db, BACKCHANNEL_QUEUE, {
      client_id: client.client_id,
      sid: session.sid,
      user_id: session.user_id,
    } satisfies BackchannelJob)
  return clients
    .filter((c) => c.frontchannel_logout_uri)
    .map((c) => {
      const url = new URL(c.frontchannel_logout_uri!)
      url.searchParams.set('iss', deps.issuer)
      url.searchParams.set('sid', session.sid)
      return url.toString()
    })
}

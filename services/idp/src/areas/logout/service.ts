import { randomBytes } from 'node:crypto'
import type { FastifyBaseLogger } from 'fastify'
import type { IdpDb } from '../../db.ts'
import { subjectFor } from '../../oauth/subject.ts'
import type { SigningKeys } from '../keys/service.ts'

export const BACKCHANNEL_EVENT = 'http://schemas.openid.net/event/backchannel-logout'

export interface LogoutDeps {
  db: IdpDb
  keys: SigningKeys
  issuer: string
  pairwiseSalt: string
  log: FastifyBaseLogger
}

/** The clients that received tokens in a session: the ones to tell when it ends. */
async function clientsOfSession(db: IdpDb, sid: string) {
  return db
    .selectFrom('authorization_codes')
    .innerJoin('clients', 'clients.client_id', 'authorization_codes.client_id')
    .select([
      'clients.client_id',
      'clients.subject_type',
      'clients.redirect_uris',
      'clients.backchannel_logout_uri',
      'clients.frontchannel_logout_uri',
    ])
    .where('authorization_codes.sid', '=', sid)
    .where('authorization_codes.used_at', 'is not', null)
    .distinct()
    .execute()
}

/**
 * OpenID Connect Back-Channel Logout 1.0: a signed logout token (typ logout+jwt, `events`, `sid`,
 * the client's own `sub`, no `nonce`) POSTed as a form to each client's back-channel URI. Returns
 * the front-channel URIs (with `iss` and `sid`) for the signed-out page to load.
 */
export async function announceLogout(
  deps: LogoutDeps,
  session: { sid: string; user_id: string },
): Promise<string[]> {
  const clients = await clientsOfSession(deps.db, session.sid)
  const now = Math.floor(Date.now() / 1000)
  await Promise.all(
    clients
      .filter((c) => c.backchannel_logout_uri)
      .map(async (client) => {
        const logoutToken = await deps.keys.sign(
          {
            iss: deps.issuer,
            aud: client.client_id,
            iat: now,
            exp: now + 120,
            jti: randomBytes(16).toString('base64url'),
            sub: subjectFor(client, session.user_id, deps.pairwiseSalt),
            sid: session.sid,
            events: { [BACKCHANNEL_EVENT]: {} },
          },
          'RS256',
          'logout+jwt',
        )
        try {
          const res = await fetch(client.backchannel_logout_uri!, {
            method: 'POST',
            headers: { 'content-type': 'application/x-www-form-urlencoded' },
            body: new URLSearchParams({ logout_token: logoutToken }).toString(),
            signal: AbortSignal.timeout(5_000),
          })
          await res.body?.cancel()
          if (!res.ok)
            deps.log.warn({ client: client.client_id, status: res.status }, 'back-channel logout refused')
        } catch (err) {
          deps.log.warn(
            { client: client.client_id, err: (err as Error).message },
            'back-channel logout failed',
          )
        }
      }),
  )
  return clients
    .filter((c) => c.frontchannel_logout_uri)
    .map((c) => {
      const url = new URL(c.frontchannel_logout_uri!)
      url.searchParams.set('iss', deps.issuer)
      url.searchParams.set('sid', session.sid)
      return url.toString()
    })
}

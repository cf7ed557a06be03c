import type { Sealer } from '@svc/kit'
import type { RentalDb } from '../../db.ts'
import { rememberClient, storedClient } from './store.ts'

/** What the console registers at the idp: a first-party confidential client with back-channel logout. */
export interface WantedClient {
  issuer: string
  redirectUri: string
  backchannelLogoutUri: string
  postLogoutRedirectUri: string
}

export interface ClientCredentials {
  clientId: string
  clientSecret: string
}

export const CLIENT_NAME = 'Rental console'

interface IdpClient {
  client_id: string
  client_name: string
  redirect_uris: string[]
  backchannel_logout_uri: string | null
  client_secret?: string
}

/** One call of the idp's management API (`X-Admin-Token`); a non-2XX is an error naming the status. */
async function manage(
  issuer: string,
  adminToken: string,
  method: 'GET' | 'POST',
  path: string,
  body?: unknown,
): Promise<{ status: number; body: unknown }> {
  const res = await fetch(`${issuer}/manage/v1${path}`, {
    method,
    headers: {
      'x-admin-token': adminToken,
      ...(body === undefined ? {} : { 'content-type': 'application/json' }),
    },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    signal: AbortSignal.timeout(5_000),
  })
  const text = await res.text()
  let parsed: unknown = text
  try {
    parsed = JSON.parse(text)
  } catch {}
  if (res.status >= 400 && res.status !== 404)
    throw new Error(`the idp answered ${res.status} to ${method} /manage/v1${path}`)
  return { status: res.status, body: parsed }
}

const matches = (client: IdpClient, wanted: WantedClient) =>
  client.redirect_uris.length === 1 &&
  client.redirect_uris[0] === wanted.redirectUri &&
  client.backchannel_logout_uri === wanted.backchannelLogoutUri

async function remember(db: RentalDb, sealer: Sealer, wanted: WantedClient, creds: ClientCredentials) {
  await rememberClient(db, {
    issuer: wanted.issuer,
    client_id: creds.clientId,
    client_secret_sealed: sealer.seal(creds.clientSecret, `idp-client:${creds.clientId}`),
    redirect_uri: wanted.redirectUri,
    backchannel_logout_uri: wanted.backchannelLogoutUri,
  })
}

/**
 * The console's client at the idp: the one this database remembers if the idp still has it with
 * the same URIs; else one the idp already has under our name and URIs (its secret rotated, as the
 * plaintext was shown only once); else a new one. The management API has no update, so a change
 * of URIs (another RENTAL_URL) registers a new client and the old one stays, unused.
 */
export async function registerConsoleClient(
  db: RentalDb,
  sealer: Sealer,
  adminToken: string,
  wanted: WantedClient,
): Promise<ClientCredentials> {
  const stored = await storedClient(db, wanted.issuer)
  if (stored) {
    const found = await manage(
      wanted.issuer,
      adminToken,
      'GET',
      `/clients/${encodeURIComponent(stored.client_id)}`,
    )
    if (found.status === 200 && matches(found.body as IdpClient, wanted))
      return {
        clientId: stored.client_id,
        clientSecret: sealer
          .open(stored.client_secret_sealed, `idp-client:${stored.client_id}`)
          .toString('utf8'),
      }
  }
  const listed = await manage(wanted.issuer, adminToken, 'GET', '/clients')
  const existing = ((listed.body as { clients?: IdpClient[] }).clients ?? []).find(
    (c) => c.client_name === CLIENT_NAME && matches(c, wanted),
  )
  let creds: ClientCredentials
  if (existing) {
    const rotated = await manage(
      wanted.issuer,
      adminToken,
      'POST',
      `/clients/${encodeURIComponent(existing.client_id)}/rotate-secret`,
    )
    creds = { clientId: existing.client_id, clientSecret: (rotated.body as IdpClient).client_secret! }
  } else {
    const created = await manage(wanted.issuer, adminToken, 'POST', '/clients', {
      client_name: CLIENT_NAME,
      client_type: 'confidential',
      first_party: true,
      redirect_uris: [wanted.redirectUri],
      post_logout_redirect_uris: [wanted.postLogoutRedirectUri],
      backchannel_logout_uri: wanted.backchannelLogoutUri,
      token_endpoint_auth_method: 'client_secret_basic',
    })
    const body = created.body as IdpClient
    if (created.status !== 201 || !body.client_secret)
      throw new Error(`the idp answered ${created.status} to the client registration`)
    creds = { clientId: body.client_id, clientSecret: body.client_secret }
  }
  await remember(db, sealer, wanted, creds)
  return creds
}

import type { Sealer } from '@svc/kit'
import type { RentalDb } from '../../db.ts'
import { rememberClient, storedClient } from './store.ts'

/** What the console registers at the idp: a first-party confidential client with back-channel logout. */
export interface WantedClient {
  issuer: string
  redirectUri: string
  backchannelLogoutUri: string
  postLogoutRedirectUri: string
  /** The console's page (RFC 7591 client_uri): where the idp's pages lead a person back to. */
  clientUri: string
  /** Where the idp sends its lifecycle events (POST /webhooks/svc-id). */
  lifecycleWebhookUrl: string
}

export interface ClientCredentials {
  clientId: string
  clientSecret: string
  /** The secret the idp signs lifecycle events with (X-Svc-Signature); absent: events are refused. */
  webhookSecret?: string | undefined
}

export const CLIENT_NAME = 'Rental console'

interface IdpClient {
  client_id: string
  client_name: string
  redirect_uris: string[]
  backchannel_logout_uri: string | null
  lifecycle_webhook_url?: string | null
  client_uri?: string | null
  client_secret?: string
  webhook_secret?: string
}

/** The idp answered 401 to the admin token: trying again with the same token cannot help. */
export class AdminTokenRefused extends Error {
  constructor(readonly request: string) {
    super(`the idp answered 401 to ${request}`)
    this.name = 'AdminTokenRefused'
  }
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
  if (res.status === 401) throw new AdminTokenRefused(`${method} /manage/v1${path}`)
  if (res.status >= 400 && res.status !== 404)
    throw new Error(`the idp answered ${res.status} to ${method} /manage/v1${path}`)
  return { status: res.status, body: parsed }
}

const matches = (client: IdpClient, wanted: WantedClient) =>
  client.redirect_uris.length === 1 &&
  client.redirect_uris[0] === wanted.redirectUri &&
  client.backchannel_logout_uri === wanted.backchannelLogoutUri &&
  client.lifecycle_webhook_url === wanted.lifecycleWebhookUrl &&
  client.client_uri === wanted.clientUri

async function remember(db: RentalDb, sealer: Sealer, wanted: WantedClient, creds: ClientCredentials) {
  await rememberClient(db, {
    issuer: wanted.issuer,
    client_id: creds.clientId,
    client_secret_sealed: sealer.seal(creds.clientSecret, `idp-client:${creds.clientId}`),
    redirect_uri: wanted.redirectUri,
    backchannel_logout_uri: wanted.backchannelLogoutUri,
    lifecycle_webhook_url: wanted.lifecycleWebhookUrl,
    webhook_secret_sealed: creds.webhookSecret
      ? sealer.seal(creds.webhookSecret, `idp-webhook:${creds.clientId}`)
      : null,
  })
}

/** A new webhook secret for the client (the plaintext was shown only once, at registration). */
async function rotateWebhookSecret(issuer: string, adminToken: string, clientId: string) {
  const rotated = await manage(
    issuer,
    adminToken,
    'POST',
    `/clients/${encodeURIComponent(clientId)}/rotate-webhook-secret`,
  )
  return (rotated.body as IdpClient).webhook_secret!
}

/**
 * The console's client at the idp: the one this database remembers if the idp still has it with
 * the same URIs; else one the idp already has under our name and URIs (its secret rotated, as the
 * plaintext was shown only once); else a new one. The management API has no update, so a change
 * of URIs (another RENTAL_URL, or a client registered before its client_uri) registers a new
 * client and the old one stays, unused.
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
    if (found.status === 200 && matches(found.body as IdpClient, wanted)) {
      const creds = {
        clientId: stored.client_id,
        clientSecret: sealer
          .open(stored.client_secret_sealed, `idp-client:${stored.client_id}`)
          .toString('utf8'),
      }
      if (stored.webhook_secret_sealed)
        return {
          ...creds,
          webhookSecret: sealer
            .open(stored.webhook_secret_sealed, `idp-webhook:${stored.client_id}`)
            .toString('utf8'),
        }
      // remembered before lifecycle events: a webhook secret is made now
      const withSecret = {
        ...creds,
        webhookSecret: await rotateWebhookSecret(wanted.issuer, adminToken, stored.client_id),
      }
      await remember(db, sealer, wanted, withSecret)
      return withSecret
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
    creds = {
      clientId: existing.client_id,
      clientSecret: (rotated.body as IdpClient).client_secret!,
      webhookSecret: await rotateWebhookSecret(wanted.issuer, adminToken, existing.client_id),
    }
  } else {
    const created = await manage(wanted.issuer, adminToken, 'POST', '/clients', {
      client_name: CLIENT_NAME,
      client_type: 'confidential',
      first_party: true,
      redirect_uris: [wanted.redirectUri],
      post_logout_redirect_uris: [wanted.postLogoutRedirectUri],
      backchannel_logout_uri: wanted.backchannelLogoutUri,
      lifecycle_webhook_url: wanted.lifecycleWebhookUrl,
      client_uri: wanted.clientUri,
      token_endpoint_auth_method: 'client_secret_basic',
    })
    const body = created.body as IdpClient
    if (created.status !== 201 || !body.client_secret)
      throw new Error(`the idp answered ${created.status} to the client registration`)
    creds = { clientId: body.client_id, clientSecret: body.client_secret, webhookSecret: body.webhook_secret }
  }
  await remember(db, sealer, wanted, creds)
  return creds
}

import { createHash, randomBytes, timingSafeEqual } from 'node:crypto'
import { notFound, type Sealer } from '@svc/kit'
import { importJWK, type JWK } from 'jose'
import type { Static } from 'typebox'
import type { IdpDb } from '../../db.ts'
import { hasPrivateMembers } from '../../oauth/jwk.ts'
import { newDidKey } from '../identity/index.ts'
import type { NewClient } from './schemas.ts'
import { forgetClients } from './cache.ts'
import {
  anyClientById,
  anyClientsAmong,
  clientById,
  clientRow,
  clientsWithoutDid,
  countLiveClientsOf,
  insertClient,
  listClients,
  liveClientByDid,
  liveClientById,
  liveClientsAmong,
  markDeleted,
  organizationClient,
  organizationClients,
  secretsOf,
  setClientKey,
  updateClient,
  updateSecrets,
} from './store.ts'
import { checkClientUri, checkOrigin, checkRedirectUri } from './uris.ts'
import { checkCallerUrl } from '../../outbound.ts'
import { idpError } from '../../errors.ts'

const token = (prefix: string) => `${prefix}${randomBytes(32).toString('base64url')}`
const hash = (secret: string) => createHash('sha256').update(secret, 'utf8').digest()
const webhookContext = (clientId: string) => `client-webhook-secret:${clientId}`

export function clientView(row: NonNullable<Awaited<ReturnType<typeof clientById>>>) {
  return {
    ...row,
    // every registered client must use PKCE S256 (identity-provider.md, Client)
    require_pkce: true,
    created_at: row.created_at.toISOString(),
    updated_at: row.updated_at.toISOString(),
  }
}

/** RFC 7591 §2: public keys only, each one importable; a private member is refused, never stored. */
async function publicJwks(jwks: { keys: Array<Record<string, unknown>> }) {
  for (const jwk of jwks.keys) {
    if (hasPrivateMembers(jwk)) throw idpError('invalid_client_metadata', 'jwks must hold public keys only')
    try {
      await importJWK(jwk as JWK, typeof jwk.alg === 'string' ? jwk.alg : algFor(jwk))
    } catch {
      throw idpError('invalid_client_metadata', 'jwks holds a key that is not a valid public JWK')
    }
  }
  return { keys: jwks.keys }
}

const algFor = (jwk: Record<string, unknown>) =>
  jwk.kty === 'RSA' ? 'RS256' : jwk.kty === 'OKP' ? 'EdDSA' : jwk.crv === 'P-384' ? 'ES384' : 'ES256'

/**
 * A new client's URIs: redirect URIs and origins by their shape, and the URIs the idp delivers to
 * or a browser frames (logout, lifecycle) through the outbound guard. Called before any
 * transaction: it may resolve names.
 */
export async function checkClientUris(input: Static<typeof NewClient>, allowPrivate: boolean) {
  const publicClient = input.client_type === 'public'
  for (const uri of input.redirect_uris) checkRedirectUri(uri, publicClient)
  for (const uri of input.post_logout_redirect_uris ?? [])
    checkRedirectUri(uri, publicClient, 'post_logout_redirect_uri', 'invalid_client_metadata')
  for (const origin of input.allowed_origins ?? []) checkOrigin(origin)
  // a link shown to people, never fetched: http only where private addresses are allowed (development, tests)
  if (input.client_uri !== undefined) checkClientUri(input.client_uri, allowPrivate)
  for (const what of [
    'backchannel_logout_uri',
    'frontchannel_logout_uri',
    'lifecycle_webhook_url',
  ] as const) {
    const uri = input[what]
    if (uri) await checkCallerUrl(uri, what, { allowPrivate })
  }
}

/**
 * Registers a client whose URIs `checkClientUris` accepted. Its secrets are shown in this answer
 * only: the client secret is kept hashed, the webhook secret sealed.
 */
export async function createClient(
  db: IdpDb,
  sealer: Sealer,
  input: Static<typeof NewClient>,
  organizationId: string | null = null,
  chosenId?: string,
) {
  if (chosenId !== undefined && (await clientById(db, chosenId)))
    throw idpError('conflict', `a client ${chosenId} is already registered`)
  const publicClient = input.client_type === 'public'
  const method =
    input.token_endpoint_auth_method ??
    (publicClient ? 'none' : input.jwks ? 'private_key_jwt' : 'client_secret_basic')
  if (publicClient !== (method === 'none'))
    throw idpError(
      'invalid_client_metadata',
      publicClient
        ? 'a public client authenticates with token_endpoint_auth_method none'
        : 'a confidential client authenticates with client_secret_basic, client_secret_post or private_key_jwt',
    )
  const keyBased = method === 'private_key_jwt'
  if (keyBased !== Boolean(input.jwks))
    throw idpError(
      'invalid_client_metadata',
      keyBased ? 'private_key_jwt needs jwks, the client’s public keys' : 'jwks is only for private_key_jwt',
    )
  const jwks = keyBased ? await publicJwks(input.jwks!) : null

  const clientId = chosenId ?? `cli_${randomBytes(18).toString('base64url')}`
  const clientSecret = publicClient || keyBased ? undefined : token('cs_')
  const webhookSecret = token('whsec_')
  // an organization's clients are third-party and pairwise, always (identity-provider.md)
  const firstParty = organizationId ? false : (input.first_party ?? false)
  const row = await insertClient(db, {
    organization_id: organizationId,
    client_id: clientId,
    client_name: input.client_name,
    client_type: input.client_type,
    first_party: firstParty,
    subject_type: organizationId ? 'pairwise' : (input.subject_type ?? (firstParty ? 'public' : 'pairwise')),
    token_endpoint_auth_method: method,
    redirect_uris: [...new Set(input.redirect_uris)],
    post_logout_redirect_uris: [...new Set(input.post_logout_redirect_uris ?? [])],
    allowed_origins: [...new Set(input.allowed_origins ?? [])],
    backchannel_logout_uri: input.backchannel_logout_uri ?? null,
    frontchannel_logout_uri: input.frontchannel_logout_uri ?? null,
    client_uri: input.client_uri ?? null,
    lifecycle_webhook_url: input.lifecycle_webhook_url ?? null,
    // every client is an agent with its own did:key
    ...newDidKey(sealer, `client-key:${clientId}`),
    client_secret_hash: clientSecret ? hash(clientSecret) : null,
    jwks: jwks ? (JSON.stringify(jwks) as never) : null,
    webhook_secret_sealed: sealer.seal(webhookSecret, webhookContext(clientId)),
  })
  return {
    ...clientView(row),
    ...(clientSecret ? { client_secret: clientSecret, client_secret_expires_at: 0 } : {}),
    webhook_secret: webhookSecret,
  }
}

export async function getClient(db: IdpDb, clientId: string) {
  const row = await clientById(db, clientId)
  if (!row) throw notFound(`no client ${clientId}`, 'not_found')
  return clientView(row)
}

export async function allClients(db: IdpDb) {
  return (await listClients(db)).map(clientView)
}

export async function rotateClientSecret(db: IdpDb, clientId: string) {
  const secrets = await secretsOf(db, clientId)
  if (!secrets) throw notFound(`no client ${clientId}`, 'not_found')
  if (!secrets.client_secret_hash)
    throw idpError('invalid_request', 'this client authenticates without a secret')
  const clientSecret = token('cs_')
  await updateSecrets(db, clientId, { client_secret_hash: hash(clientSecret) })
  forgetClients()
  return { client_id: clientId, client_secret: clientSecret, client_secret_expires_at: 0 }
}

/** The old webhook secret stops validating at once: only the new one is kept. */
export async function rotateWebhookSecret(db: IdpDb, sealer: Sealer, clientId: string) {
  const webhookSecret = token('whsec_')
  const updated = await updateSecrets(db, clientId, {
    webhook_secret_sealed: sealer.seal(webhookSecret, webhookContext(clientId)),
  })
  forgetClients()
  if (!updated) throw notFound(`no client ${clientId}`, 'not_found')
  return { client_id: clientId, webhook_secret: webhookSecret }
}

/** Checks a secret against a client's stored hash in constant time (a client without a secret never matches). */
export function secretMatches(storedHash: Buffer | null, secret: string): boolean {
  return timingSafeEqual(hash(secret), storedHash ?? Buffer.alloc(32)) && storedHash !== null
}

/** Checks a client secret in constant time, loading the client first. */
export async function verifyClientSecret(db: IdpDb, clientId: string, secret: string): Promise<boolean> {
  return secretMatches((await secretsOf(db, clientId))?.client_secret_hash ?? null, secret)
}

/** A client's current webhook secret, to sign lifecycle events and check relayed ones. */
export async function webhookSecretOf(
  db: IdpDb,
  sealer: Sealer,
  clientId: string,
): Promise<string | undefined> {
  const secrets = await secretsOf(db, clientId)
  return secrets
    ? sealer.open(secrets.webhook_secret_sealed, webhookContext(clientId)).toString('utf8')
    : undefined
}

/** Gives a did:key to clients registered before clients had one. */
export async function backfillClientKeys(db: IdpDb, sealer: Sealer): Promise<void> {
  for (const { client_id } of await clientsWithoutDid(db))
    await setClientKey(db, client_id, newDidKey(sealer, `client-key:${client_id}`))
}

export type { ClientRow } from './store.ts'

/**
 * What other areas may ask of the clients table. Each call takes the caller's db, or its
 * transaction when the read or write must be part of it. A live client is neither deleted nor of a
 * disabled organization; the others are known by id only where a past session still names them.
 */
export const clientsService = {
  live: liveClientById,
  /** The whole row of a live client (as the authorization endpoint checks it). */
  liveRow: clientRow,
  liveByDid: liveClientByDid,
  liveAmong: liveClientsAmong,
  anyById: anyClientById,
  anyAmong: anyClientsAmong,
  /** An organization's live clients, oldest first. */
  ofOrganization: organizationClients,
  /** One of the organization's live clients; another organization's is not found. */
  ofOrganizationById: organizationClient,
  countLiveOf: countLiveClientsOf,
  markDeleted,
  update: updateClient,
}

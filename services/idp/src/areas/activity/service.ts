import { createHmac, timingSafeEqual } from 'node:crypto'
import { type Sealer } from '@svc/kit'
import { b64Encode, b64uDecode } from '@svc/trust/base64url'
import { ed25519FromDidKey } from '@svc/trust/did-key'
import { verifyEd25519 } from '@svc/trust/ed25519'
import { canonicalBytes } from '@svc/trust/jcs'
import { leafHash } from '@svc/trust/merkle'
import type { IdpDb } from '../../db.ts'
import { subjectFor } from '../../oauth/subject.ts'
import { webhookSecretOf } from '../clients/index.ts'
import type { AccountsService } from '../accounts/index.ts'
import type { ClientsService } from '../clients/index.ts'
import { keepActivity, recentActivity } from './store.ts'
import { idpError } from '../../errors.ts'

export interface ActivityDeps {
  db: IdpDb
  sealer: Sealer
  pairwiseSalt: string
  clients: ClientsService
  accounts: AccountsService
}

export type Outcome = 'accepted' | 'duplicate' | 'ignored'

interface Relayed {
  type?: unknown
  subject_tag?: unknown
  data?: {
    hash?: unknown
    receipt?: { type?: unknown; issuer?: unknown; subject?: unknown; issued_at?: unknown }
    signature?: unknown
  }
}

const malformed = (message: string) => idpError('invalid_request', message)

/** `sha256=<hex>` of the raw bytes under the client's webhook secret, compared in constant time. */
function signatureMatches(secret: string, raw: Buffer, header: string | undefined) {
  const expected = Buffer.from(`sha256=${createHmac('sha256', secret).update(raw).digest('hex')}`)
  const given = Buffer.from(header ?? '')
  return given.length === expected.length && timingSafeEqual(given, expected)
}

/** The receipt must be what its hash says and signed by its issuer: a relay cannot invent activity. */
function checkReceipt(data: NonNullable<Relayed['data']>, hash: string) {
  const { receipt, signature } = data
  if (typeof receipt !== 'object' || receipt === null || typeof signature !== 'string')
    throw malformed('data.receipt and data.signature are required')
  if (
    typeof receipt.issuer !== 'string' ||
    typeof receipt.type !== 'string' ||
    typeof receipt.issued_at !== 'string'
  )
    throw malformed('the receipt needs issuer, type and issued_at')
  if (Number.isNaN(Date.parse(receipt.issued_at))) throw malformed('the receipt’s issued_at is not a date')
  if (b64Encode(leafHash(canonicalBytes({ receipt, signature }))) !== hash)
    throw malformed('data.hash is not the leaf hash of the receipt and its signature')
  let valid = false
  try {
    valid = verifyEd25519(ed25519FromDidKey(receipt.issuer), canonicalBytes(receipt), b64uDecode(signature))
  } catch {
    valid = false
  }
  if (!valid) throw malformed('the receipt’s signature does not verify against its issuer')
  return receipt as { type: string; issuer: string; subject?: unknown; issued_at: string }
}

/**
 * identity-provider.md, Inbound activity events: a client relays a ledger `receipt.recorded`
 * envelope and the `subject_tag` it knows the user by (its own `sub`), signed over the exact
 * bytes with its webhook secret. Kept once per receipt for the user whose DID is the receipt's
 * subject, when the tag is that user's `sub` at this client; anything else is ignored.
 */
export async function ingest(
  deps: ActivityDeps,
  clientId: string,
  raw: Buffer,
  signatureHeader: string | undefined,
): Promise<Outcome> {
  const client = await deps.clients.live(deps.db, clientId, [
    'client_id',
    'subject_type',
    'redirect_uris',
    'organization_id',
  ])
  if (!client) throw idpError('not_found', `no client ${clientId}`)
  const secret = (await webhookSecretOf(deps.db, deps.sealer, clientId))!
  if (!signatureMatches(secret, raw, signatureHeader))
    throw idpError('access_denied', 'X-Svc-Signature is not the HMAC-SHA256 of this body')
  let body: Relayed
  try {
    body = JSON.parse(raw.toString('utf8')) as Relayed
  } catch {
    throw malformed('the body is not JSON')
  }
  if (typeof body !== 'object' || body === null) throw malformed('the body is not a JSON object')
  const hash = body.data?.hash
  if (typeof hash !== 'string') throw malformed('data.hash is required')
  if (typeof body.subject_tag !== 'string') throw malformed('subject_tag is required')
  if (body.type !== 'receipt.recorded') return 'ignored'
  const receipt = checkReceipt(body.data!, hash)
  const userId =
    typeof receipt.subject === 'string' ? await deps.accounts.idByDid(deps.db, receipt.subject) : undefined
  if (!userId || subjectFor(client, userId, deps.pairwiseSalt) !== body.subject_tag) return 'ignored'
  const stored = await keepActivity(deps.db, {
    receipt_hash: hash,
    user_id: userId,
    client_id: clientId,
    receipt_type: receipt.type,
    issuer: receipt.issuer,
    issued_at: new Date(receipt.issued_at),
  })
  return stored ? 'accepted' : 'duplicate'
}

/** The user's latest relayed receipts, newest first, each with its client's name. */
export async function activityOf(deps: Pick<ActivityDeps, 'db' | 'clients'>, userId: string, limit = 20) {
  const rows = await recentActivity(deps.db, userId, limit)
  const clients = await deps.clients.anyAmong(
    deps.db,
    [...new Set(rows.map((row) => row.client_id))],
    ['client_id', 'client_name'],
  )
  const names = new Map(clients.map((client) => [client.client_id, client.client_name]))
  return rows.flatMap(({ client_id, ...row }) =>
    names.has(client_id) ? [{ ...row, client_name: names.get(client_id)! }] : [],
  )
}

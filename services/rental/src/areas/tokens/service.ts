import { createHash, randomBytes, timingSafeEqual } from 'node:crypto'
import { rentalError } from '../../errors.ts'
import type { RentalDb } from '../../db.ts'
import { DEFAULT_SCOPES } from './scopes.ts'

/** Who issues or narrows a token: a member of the organization, with its role's permissions. */
export type TokenActor = Pick<Membership, 'orgId' | 'memberId' | 'permissions'>
import {
  countLiveTokens,
  insertToken,
  listTokens,
  tokenByHash,
  type TokenKind,
  updateToken,
} from './store.ts'
import { type Membership, refuse } from '../../http/index.ts'

/** API tokens are `agt_` and 32 random bytes (base64url); the database keeps their SHA-256. */
export const TOKEN_PREFIX = 'agt_'
/** Organization keys (POST /v1/auth/keys) are `ork_` and 32 random bytes, kept the same way. */
export const ORG_KEY_PREFIX = 'ork_'
const TOKEN_PATTERN = /^(agt|ork)_[A-Za-z0-9_-]{43}$/
/** How much of the plaintext the list shows: the prefix and four characters. */
const SHOWN = TOKEN_PREFIX.length + 4

const hashOf = (token: string) => createHash('sha256').update(token, 'utf8').digest()

function mintToken(prefix: string = TOKEN_PREFIX) {
  const plaintext = `${prefix}${randomBytes(32).toString('base64url')}`
  return { plaintext, hash: hashOf(plaintext), prefix: plaintext.slice(0, SHOWN) }
}

type Row = Awaited<ReturnType<typeof listTokens>>[number]

const view = (row: Row) => ({
  id: row.id,
  label: row.label,
  prefix: row.prefix,
  scopes: row.scopes,
  engagement_ids: row.engagement_ids,
  expires_at: row.expires_at?.toISOString() ?? null,
  created_at: row.created_at.toISOString(),
  rotated_at: row.rotated_at?.toISOString() ?? null,
  kind: row.kind,
})

const unknownToken = (id: string) => rentalError('not_found', `no API token ${id}`)

/**
 * A token belongs to the organization; its scopes are the default ones its creator's role holds
 * (a token never has more than its creator at creation). It keeps working when the creator leaves
 * or changes role: the organization's admins list and revoke its tokens.
 */
export async function issueToken(db: RentalDb, creator: TokenActor, label: string, max: number) {
  const owner = creator.orgId
  if ((await countLiveTokens(db, owner)) >= max)
    throw rentalError('quota_exceeded', `at most ${max} API tokens at once: revoke one first`)
  const minted = mintToken()
  const row = await insertToken(db, {
    id: `tok_${randomBytes(12).toString('base64url')}`,
    owner,
    createdBy: creator.memberId,
    scopes: DEFAULT_SCOPES.filter((scope) => creator.permissions.includes(scope)),
    label,
    hash: minted.hash,
    prefix: minted.prefix,
  })
  return { ...view(row), token: minted.plaintext }
}

export async function tokensOf(db: RentalDb, owner: string, kind?: TokenKind) {
  return (await listTokens(db, owner, kind)).map(view)
}

/**
 * An organization key: its scopes are given (each one the issuer's role holds), it may expire.
 * Kept, counted, listed and revoked as the `agt_` tokens are (GET and DELETE /api/tokens too).
 */
export async function issueOrgKey(
  db: RentalDb,
  creator: TokenActor,
  input: { label: string; scopes: readonly string[]; expiresAt: Date | null },
  max: number,
  now: Date,
) {
  const beyond = input.scopes.find((scope) => !creator.permissions.includes(scope))
  if (beyond) throw refuse(beyond)
  if (input.expiresAt && input.expiresAt <= now)
    throw rentalError('invalid_request', 'expires_at must be a date-time in the future')
  if ((await countLiveTokens(db, creator.orgId)) >= max)
    throw rentalError('quota_exceeded', `at most ${max} API tokens and keys at once: revoke one first`)
  const minted = mintToken(ORG_KEY_PREFIX)
  const row = await insertToken(db, {
    id: `tok_${randomBytes(12).toString('base64url')}`,
    owner: creator.orgId,
    createdBy: creator.memberId,
    scopes: [...new Set(input.scopes)],
    label: input.label,
    hash: minted.hash,
    prefix: minted.prefix,
    kind: 'org',
    expiresAt: input.expiresAt,
  })
  return { ...view(row), token: minted.plaintext }
}

export async function revokeToken(db: RentalDb, owner: string, id: string, now: Date) {
  const row = await updateToken(db, owner, id, { revoked_at: now })
  if (!row) throw unknownToken(id)
  return { id: row.id, revoked: true as const }
}

export interface TokenPolicy {
  scopes?: string[] | undefined
  engagement_ids?: string[] | null | undefined
  expires_at?: string | null | undefined
}

/**
 * Sets what is given of the policy: scopes, the engagements it may act on (null: any), the expiry
 * (null: none). A change that gives none of them is 400: a client sending `{}` has a bug to
 * hear about, and a silent no-op would hide it.
 */
export async function setPolicy(db: RentalDb, actor: TokenActor, id: string, policy: TokenPolicy, now: Date) {
  const owner = actor.orgId
  // a policy gives a token no scope its setter's role lacks
  const beyond = policy.scopes?.find((scope) => !actor.permissions.includes(scope))
  if (beyond) throw refuse(beyond)
  if (policy.scopes === undefined && policy.engagement_ids === undefined && policy.expires_at === undefined)
    throw rentalError(
      'invalid_request',
      'give scopes, engagement_ids or expires_at: the policy change is empty',
    )
  let expiresAt: Date | null | undefined
  if (policy.expires_at !== undefined && policy.expires_at !== null) {
    expiresAt = new Date(policy.expires_at)
    if (Number.isNaN(expiresAt.getTime()) || expiresAt <= now)
      throw rentalError('invalid_request', 'expires_at must be a date-time in the future')
  } else if (policy.expires_at === null) expiresAt = null
  const row = await updateToken(db, owner, id, {
    ...(policy.scopes !== undefined ? { scopes: [...new Set(policy.scopes)] } : {}),
    ...(policy.engagement_ids !== undefined
      ? { engagement_ids: policy.engagement_ids === null ? null : [...new Set(policy.engagement_ids)] }
      : {}),
    ...(expiresAt !== undefined ? { expires_at: expiresAt } : {}),
  })
  if (!row) throw unknownToken(id)
  return view(row)
}

/** A new plaintext for the same token (its id and policy kept); the old plaintext stops working at once. */
export async function rotateToken(db: RentalDb, owner: string, id: string, now: Date) {
  // an organization key stays one: its new plaintext is ork_ too
  const kind = (await listTokens(db, owner)).find((t) => t.id === id)?.kind
  const minted = mintToken(kind === 'org' ? ORG_KEY_PREFIX : TOKEN_PREFIX)
  const row = await updateToken(db, owner, id, {
    token_hash: minted.hash,
    prefix: minted.prefix,
    rotated_at: now,
  })
  if (!row) throw unknownToken(id)
  return { ...view(row), token: minted.plaintext }
}

export interface VerifiedApiToken {
  id: string
  /** The organization that owns the token. */
  owner: string
  scopes: string[]
  /** The engagements the token may act on; null: any of the owner's. */
  engagementIds: string[] | null
  expiresAt: Date | null
  kind: TokenKind
  /** The member who issued it (null for tokens older than organizations). */
  createdBy: string | null
}

/**
 * For the A2A surface: the live token a `Bearer agt_…` value (or the bare token) names, or null
 * (unknown, revoked, expired or malformed). Found by its SHA-256, then compared in constant time.
 */
export async function verifyApiToken(
  db: RentalDb,
  bearer: string | undefined,
  now: Date = new Date(),
): Promise<VerifiedApiToken | null> {
  if (typeof bearer !== 'string') return null
  const token = bearer.replace(/^Bearer\s+/i, '').trim()
  if (!TOKEN_PATTERN.test(token)) return null
  const hash = hashOf(token)
  const row = await tokenByHash(db, hash)
  if (!row || !timingSafeEqual(row.token_hash, hash)) return null
  if (row.revoked_at || (row.expires_at && row.expires_at <= now)) return null
  return {
    id: row.id,
    owner: row.org_id,
    scopes: row.scopes,
    engagementIds: row.engagement_ids,
    expiresAt: row.expires_at,
    kind: row.kind,
    createdBy: row.created_by,
  }
}

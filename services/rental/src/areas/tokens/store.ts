import type { Generated } from 'kysely'
import type { RentalDb } from '../../db.ts'

/** The tokens area's table: `agt_` API tokens (their SHA-256, never the plaintext). */
export interface TokenTables {
  api_tokens: {
    id: string
    org_id: string
    created_by: string | null
    label: string
    token_hash: Buffer
    prefix: string
    scopes: string[]
    engagement_ids: string[] | null
    expires_at: Date | null
    created_at: Generated<Date>
    rotated_at: Date | null
    revoked_at: Date | null
    /** `agt`: an A2A token (POST /api/tokens); `org`: an organization key (POST /v1/auth/keys). */
    kind: Generated<TokenKind>
  }
}

export type TokenKind = 'agt' | 'org'

const COLUMNS = [
  'id',
  'label',
  'prefix',
  'scopes',
  'engagement_ids',
  'expires_at',
  'created_at',
  'rotated_at',
  'kind',
] as const

export async function insertToken(
  db: RentalDb,
  row: {
    id: string
    owner: string
    createdBy: string
    scopes: readonly string[]
    label: string
    hash: Buffer
    prefix: string
    kind?: TokenKind
    expiresAt?: Date | null
  },
) {
  return db
    .insertInto('api_tokens')
    .values({
      id: row.id,
      org_id: row.owner,
      created_by: row.createdBy,
      label: row.label,
      token_hash: row.hash,
      prefix: row.prefix,
      scopes: [...row.scopes],
      engagement_ids: null,
      expires_at: row.expiresAt ?? null,
      kind: row.kind ?? 'agt',
      rotated_at: null,
      revoked_at: null,
    })
    .returning(COLUMNS)
    .executeTakeFirstOrThrow()
}

export async function countLiveTokens(db: RentalDb, owner: string): Promise<number> {
  const row = await db
    .selectFrom('api_tokens')
    .select((eb) => eb.fn.countAll<number>().as('n'))
    .where('org_id', '=', owner)
    .where('revoked_at', 'is', null)
    .executeTakeFirstOrThrow()
  return Number(row.n)
}

export function listTokens(db: RentalDb, owner: string, kind?: TokenKind) {
  let query = db.selectFrom('api_tokens').select(COLUMNS).where('org_id', '=', owner)
  if (kind) query = query.where('kind', '=', kind)
  return query.where('revoked_at', 'is', null).orderBy('created_at', 'desc').orderBy('id').execute()
}

/** Every change is scoped to the owner and to live tokens: another client's token, or a revoked one, is not found. */
export function updateToken(
  db: RentalDb,
  owner: string,
  id: string,
  set: Partial<{
    token_hash: Buffer
    prefix: string
    scopes: string[]
    engagement_ids: string[] | null
    expires_at: Date | null
    rotated_at: Date
    revoked_at: Date
  }>,
) {
  return db
    .updateTable('api_tokens')
    .set(set)
    .where('id', '=', id)
    .where('org_id', '=', owner)
    .where('revoked_at', 'is', null)
    .returning(COLUMNS)
    .executeTakeFirst()
}

export function tokenByHash(db: RentalDb, hash: Buffer) {
  return db
    .selectFrom('api_tokens')
    .select([
      'id',
      'org_id',
      'created_by',
      'kind',
      'token_hash',
      'scopes',
      'engagement_ids',
      'expires_at',
      'revoked_at',
    ])
    .where('token_hash', '=', hash)
    .executeTakeFirst()
}

/** Revokes every live token the member created (its creator's identity ended at the idp). */
export async function revokeCreatedBy(db: RentalDb, memberId: string, now: Date): Promise<number> {
  const result = await db
    .updateTable('api_tokens')
    .set({ revoked_at: now })
    .where('created_by', '=', memberId)
    .where('revoked_at', 'is', null)
    .executeTakeFirst()
  return Number(result.numUpdatedRows)
}

/** Erasure: the organization's tokens deleted (their labels are the client's words). */
export async function deleteTokensOf(trx: RentalDb, orgId: string): Promise<number> {
  const result = await trx.deleteFrom('api_tokens').where('org_id', '=', orgId).executeTakeFirst()
  return Number(result.numDeletedRows)
}

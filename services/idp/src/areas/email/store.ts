import { createHash, randomBytes } from 'node:crypto'
import type { Generated } from 'kysely'
import type { IdpDb, IdpTables } from '../../db.ts'

/** The tables of the email area. */
export interface EmailTables {
  email_tokens: {
    token_hash: Buffer
    user_id: string
    purpose: 'verify_email' | 'reset_password'
    created_at: Generated<Date>
    expires_at: Date
    used_at: Date | null
  }
  dev_outbox: { id: string; recipient: string; subject: string; body: string; created_at: Generated<Date> }
}

type Purpose = IdpTables['email_tokens']['purpose']
const digest = (token: string) => createHash('sha256').update(token).digest()

export async function outbox(db: IdpDb, limit = 50) {
  return db.selectFrom('dev_outbox').selectAll().orderBy('created_at', 'desc').limit(limit).execute()
}

/** A single-use link token for `purpose`, valid `ttlMs`; only its hash is kept. */
export async function issueEmailToken(
  db: IdpDb,
  userId: string,
  purpose: Purpose,
  ttlMs: number,
): Promise<string> {
  const token = randomBytes(32).toString('base64url')
  await db
    .insertInto('email_tokens')
    .values({ token_hash: digest(token), user_id: userId, purpose, expires_at: new Date(Date.now() + ttlMs) })
    .execute()
  return token
}

/** Uses a link token once: the user it was for, or undefined when unknown, expired, used or for another purpose. */
export async function consumeEmailToken(
  db: IdpDb,
  token: string,
  purpose: Purpose,
): Promise<string | undefined> {
  const row = await db
    .updateTable('email_tokens')
    .set({ used_at: new Date() })
    .where('token_hash', '=', digest(token))
    .where('purpose', '=', purpose)
    .where('used_at', 'is', null)
    .where('expires_at', '>', new Date())
    .returning('user_id')
    .executeTakeFirst()
  return row?.user_id
}

export async function insertOutboxMail(
  db: IdpDb,
  mail: { recipient: string; subject: string; body: string },
) {
  await db
    .insertInto('dev_outbox')
    .values({ id: `eml_${randomBytes(12).toString('base64url')}`, ...mail })
    .execute()
}

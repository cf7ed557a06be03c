import type { Generated } from 'kysely'
import type { RentalDb } from '../../db.ts'
import { membershipColumn } from '../orgs/index.ts'

/** The auth area's tables: console sessions, and the console's client at the idp. */
export interface AuthTables {
  console_sessions: {
    id_hash: Buffer
    subject: string
    idp_sid: string | null
    csrf_token_hash: Buffer
    name: string | null
    email: string | null
    email_verified: Generated<boolean>
    client_did: string | null
    id_token: string | null
    /** The `acr` and `auth_time` of the session's last ID token (sign-in or step-up). */
    acr: string | null
    auth_time: Date | null
    created_at: Generated<Date>
    expires_at: Date
    ended_at: Date | null
  }
  idp_clients: {
    issuer: string
    client_id: string
    client_secret_sealed: Buffer
    redirect_uri: string
    backchannel_logout_uri: string
    lifecycle_webhook_url: string | null
    webhook_secret_sealed: Buffer | null
    updated_at: Generated<Date>
  }
}

export interface NewSession {
  idHash: Buffer
  csrfHash: Buffer
  subject: string
  idpSid: string | null
  name: string | null
  email: string | null
  emailVerified: boolean
  clientDid: string | null
  /** The ID token of the sign-in: the `id_token_hint` of its RP-initiated logout. */
  idToken: string | null
  acr: string | null
  authTime: Date | null
  expiresAt: Date
}

export async function insertSession(db: RentalDb, s: NewSession) {
  await db
    .insertInto('console_sessions')
    .values({
      id_hash: s.idHash,
      csrf_token_hash: s.csrfHash,
      subject: s.subject,
      idp_sid: s.idpSid,
      name: s.name,
      email: s.email,
      email_verified: s.emailVerified,
      client_did: s.clientDid,
      id_token: s.idToken,
      acr: s.acr,
      auth_time: s.authTime,
      expires_at: s.expiresAt,
      ended_at: null,
    })
    .execute()
}

/** A live session by the hash of its cookie id: not ended, not expired; with its subject's membership. */
export function liveSession(db: RentalDb, idHash: Buffer, now: Date) {
  return db
    .selectFrom('console_sessions')
    .select([
      'id_hash',
      'subject',
      'idp_sid',
      'csrf_token_hash',
      'name',
      'email',
      'email_verified',
      'client_did',
      'acr',
      'auth_time',
      'expires_at',
      membershipColumn('console_sessions.subject'),
    ])
    .where('id_hash', '=', idHash)
    .where('ended_at', 'is', null)
    .where('expires_at', '>', now)
    .executeTakeFirst()
}

/** A step-up done: the session's `acr`, `auth_time` and ID token become the step-up's. */
export async function recordStepUp(
  db: RentalDb,
  idHash: Buffer,
  step: { acr: string; authTime: Date; idToken: string | null },
) {
  await db
    .updateTable('console_sessions')
    .set({ acr: step.acr, auth_time: step.authTime, ...(step.idToken ? { id_token: step.idToken } : {}) })
    .where('id_hash', '=', idHash)
    .where('ended_at', 'is', null)
    .execute()
}

/** Erasure: every session of these subjects ends, and the profile they copied from the idp is wiped. */
export async function eraseSessionsOf(
  db: RentalDb,
  subjects: string[],
  now: Date,
  keep?: Buffer,
): Promise<number> {
  if (subjects.length === 0) return 0
  const wiped = { name: null, email: null, client_did: null, id_token: null, idp_sid: null }
  await db.updateTable('console_sessions').set(wiped).where('subject', 'in', subjects).execute()
  let ending = db
    .updateTable('console_sessions')
    .set({ ended_at: now })
    .where('subject', 'in', subjects)
    .where('ended_at', 'is', null)
  if (keep) ending = ending.where('id_hash', '!=', keep)
  const result = await ending.executeTakeFirst()
  return Number(result.numUpdatedRows)
}

/** The ID token a session was made with (its logout's `id_token_hint`), or null. */
export async function idTokenOf(db: RentalDb, idHash: Buffer): Promise<string | null> {
  const row = await db
    .selectFrom('console_sessions')
    .select('id_token')
    .where('id_hash', '=', idHash)
    .executeTakeFirst()
  return row?.id_token ?? null
}

export async function endSession(db: RentalDb, idHash: Buffer, now: Date): Promise<boolean> {
  const result = await db
    .updateTable('console_sessions')
    .set({ ended_at: now })
    .where('id_hash', '=', idHash)
    .where('ended_at', 'is', null)
    .executeTakeFirst()
  return result.numUpdatedRows > 0n
}

/**
 * Back-channel logout: the sessions of the idp session `sid` (of `subject` when both are given),
 * or, with no `sid`, every session of `subject`.
 */
export async function endSessionsOf(
  db: RentalDb,
  who: { sid?: string | undefined; subject?: string | undefined },
  now: Date,
): Promise<number> {
  let query = db.updateTable('console_sessions').set({ ended_at: now }).where('ended_at', 'is', null)
  if (who.sid) query = query.where('idp_sid', '=', who.sid)
  if (who.subject) query = query.where('subject', '=', who.subject)
  const result = await query.executeTakeFirst()
  return Number(result.numUpdatedRows)
}

/** The console's client at an issuer, as this database remembers it. */
export const storedClient = (db: RentalDb, issuer: string) =>
  db.selectFrom('idp_clients').selectAll().where('issuer', '=', issuer).executeTakeFirst()

export async function rememberClient(
  db: RentalDb,
  row: {
    issuer: string
    client_id: string
    client_secret_sealed: Buffer
    redirect_uri: string
    backchannel_logout_uri: string
    lifecycle_webhook_url: string
    webhook_secret_sealed: Buffer | null
  },
) {
  const values = { ...row, updated_at: new Date() }
  await db
    .insertInto('idp_clients')
    .values(values)
    .onConflict((oc) => oc.column('issuer').doUpdateSet(values))
    .execute()
}

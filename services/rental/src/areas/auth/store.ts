import type { RentalDb } from '../../db.ts'

export interface NewSession {
  idHash: Buffer
  csrfHash: Buffer
  subject: string
  idpSid: string | null
  name: string | null
  email: string | null
  clientDid: string | null
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
      client_did: s.clientDid,
      expires_at: s.expiresAt,
      ended_at: null,
    })
    .execute()
}

/** A live session by the hash of its cookie id: not ended, not expired. */
export function liveSession(db: RentalDb, idHash: Buffer, now: Date) {
  return db
    .selectFrom('console_sessions')
    .select(['id_hash', 'subject', 'idp_sid', 'csrf_token_hash', 'name', 'email', 'client_did', 'expires_at'])
    .where('id_hash', '=', idHash)
    .where('ended_at', 'is', null)
    .where('expires_at', '>', now)
    .executeTakeFirst()
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

import type { RentalDb } from '../../db.ts'
import { REVOKE_SCOPE } from '../record/store.ts'

/** Inserts the revocation; undefined when the client had already revoked the agent. */
export const insertRevocation = (db: RentalDb, subject: string, did: string, reason: string, at: Date) =>
  db
    .insertInto('agent_revocations')
    .values({ client_subject: subject, agent_did: did, reason, revoked_at: at })
    .onConflict((oc) => oc.columns(['client_subject', 'agent_did']).doNothing())
    .returning(['revoked_at'])
    .executeTakeFirst()

/** The client's unfinished tasks with the agent fail with `agent revoked`; answers their ids. */
export async function stopTasks(db: RentalDb, subject: string, did: string, at: Date) {
  const rows = await db
    .updateTable('tasks')
    .set({ state: 'failed', error: 'agent revoked', completed_at: at, input_text: null })
    .where('client_subject', '=', subject)
    .where('agent_did', '=', did)
    .where('state', 'in', ['submitted', 'working'])
    .returning('id')
    .execute()
  return rows.map((r) => r.id)
}

/** Keeps the first revoke answer, given again to every later revoke of the same agent. */
export async function keepRevokeAnswer(db: RentalDb, subject: string, did: string, body: unknown) {
  await db
    .insertInto('idempotent_answers')
    .values({
      client_subject: subject,
      scope: REVOKE_SCOPE,
      key: did,
      request_digest: did,
      status: 200,
      body: JSON.stringify(body),
    })
    .onConflict((oc) => oc.columns(['client_subject', 'scope', 'key']).doNothing())
    .execute()
}

/** The client DID of the client's latest engagement with the agent. */
export const latestClientDid = async (db: RentalDb, subject: string, did: string) =>
  (
    await db
      .selectFrom('engagements')
      .select('client_did')
      .where('client_subject', '=', subject)
      .where('agent_did', '=', did)
      .orderBy('created_at', 'desc')
      .orderBy('id', 'desc')
      .executeTakeFirst()
  )?.client_did

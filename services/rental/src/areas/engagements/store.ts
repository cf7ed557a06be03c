import type { Selectable } from 'kysely'
import type { RentalDb, RentalTables } from '../../db.ts'

export type EngagementRow = Selectable<RentalTables['engagements']>
export type EscrowRow = Selectable<RentalTables['escrows']>

/** The client's engagement, or undefined (another client's is not found either). */
export const engagementOf = (db: RentalDb, subject: string, id: string, lock = false) => {
  let query = db
    .selectFrom('engagements')
    .selectAll()
    .where('id', '=', id)
    .where('client_subject', '=', subject)
  if (lock) query = query.forUpdate()
  return query.executeTakeFirst()
}

export const engagementsOf = (db: RentalDb, subject: string, limit: number, offset: number) =>
  db
    .selectFrom('engagements')
    .selectAll()
    .where('client_subject', '=', subject)
    .orderBy('created_at', 'desc')
    .orderBy('id', 'desc')
    .limit(limit)
    .offset(offset)
    .execute()

export const escrowsOf = (db: RentalDb, engagementId: string) =>
  db
    .selectFrom('escrows')
    .selectAll()
    .where('engagement_id', '=', engagementId)
    .orderBy('created_at')
    .orderBy('id')
    .execute()

export const escrowByHash = (db: RentalDb, engagementId: string, hash: string, lock = false) => {
  let query = db
    .selectFrom('escrows')
    .selectAll()
    .where('engagement_id', '=', engagementId)
    .where('hash', '=', hash)
  if (lock) query = query.forUpdate()
  return query.executeTakeFirst()
}

/** The job and, when it serves the job, the agent with that DID. */
export async function jobAndAgent(db: RentalDb, jobId: string, agentDid: string) {
  const job = await db.selectFrom('jobs').selectAll().where('id', '=', jobId).executeTakeFirst()
  if (!job) return { job: undefined, agent: undefined }
  const agent = await db
    .selectFrom('job_agents')
    .innerJoin('agents', 'agents.id', 'job_agents.agent_id')
    .select(['agents.id', 'agents.did', 'agents.card_url'])
    .where('job_agents.job_id', '=', jobId)
    .where('agents.did', '=', agentDid)
    .executeTakeFirst()
  return { job, agent }
}

export const isRevoked = async (db: RentalDb, subject: string, agentDid: string) =>
  Boolean(
    await db
      .selectFrom('agent_revocations')
      .select('agent_did')
      .where('client_subject', '=', subject)
      .where('agent_did', '=', agentDid)
      .executeTakeFirst(),
  )

/** Records a client's revocation of an agent (the revoke route and tests use it). */
export async function revokeAgent(db: RentalDb, subject: string, agentDid: string, reason: string) {
  await db
    .insertInto('agent_revocations')
    .values({ client_subject: subject, agent_did: agentDid, reason })
    .onConflict((oc) => oc.columns(['client_subject', 'agent_did']).doNothing())
    .execute()
}

export const idempotentAnswer = (db: RentalDb, subject: string, scope: string, key: string) =>
  db
    .selectFrom('idempotent_answers')
    .selectAll()
    .where('client_subject', '=', subject)
    .where('scope', '=', scope)
    .where('key', '=', key)
    .executeTakeFirst()

export async function keepIdempotentAnswer(
  db: RentalDb,
  row: { subject: string; scope: string; key: string; digest: string; status: number; body: unknown },
) {
  await db
    .insertInto('idempotent_answers')
    .values({
      client_subject: row.subject,
      scope: row.scope,
      key: row.key,
      request_digest: row.digest,
      status: row.status,
      body: JSON.stringify(row.body),
    })
    .onConflict((oc) => oc.columns(['client_subject', 'scope', 'key']).doNothing())
    .execute()
}

/** Where a receipt is: its ledger index once the outbox delivered it. */
export const receiptState = (db: RentalDb, id: string) =>
  db
    .selectFrom('receipt_outbox')
    .select(['id', 'ledger_index', 'delivered_at'])
    .where('id', '=', id)
    .executeTakeFirst()

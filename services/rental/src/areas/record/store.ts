import { sql } from 'kysely'
import type { RentalDb } from '../../db.ts'

/** The scope under which a client's first revoke answer is kept (key: the agent DID). */
export const REVOKE_SCOPE = 'agent.revoke'

/** The catalogue's agent with that DID and the jobs it serves, or undefined. */
export async function catalogueAgent(db: RentalDb, did: string) {
  const agent = await db
    .selectFrom('agents')
    .select(['id', 'did', 'name', 'description', 'card_url'])
    .where('did', '=', did)
    .executeTakeFirst()
  if (!agent) return undefined
  const jobs = await db
    .selectFrom('job_agents')
    .innerJoin('jobs', 'jobs.id', 'job_agents.job_id')
    .select(['jobs.id', 'jobs.title', 'jobs.outcome', 'jobs.price_fils', 'jobs.currency'])
    .where('job_agents.agent_id', '=', agent.id)
    .orderBy('jobs.id')
    .execute()
  return { ...agent, jobs: jobs.map((j) => ({ ...j, price_fils: Number(j.price_fils) })) }
}

/** The client's engagements with the agent, oldest first. */
export const engagementsWith = (db: RentalDb, subject: string, did: string) =>
  db
    .selectFrom('engagements')
    .selectAll()
    .where('client_subject', '=', subject)
    .where('agent_did', '=', did)
    .orderBy('created_at')
    .orderBy('id')
    .execute()

/** The client's tasks with the agent, oldest first. */
export const tasksWith = (db: RentalDb, subject: string, did: string) =>
  db
    .selectFrom('tasks')
    .select([
      'id',
      'engagement_id',
      'state',
      'input_sha256',
      'output_sha256',
      'receipt_id',
      'receipt_leaf_hash',
      'error',
      'created_at',
      'completed_at',
    ])
    .where('client_subject', '=', subject)
    .where('agent_did', '=', did)
    .orderBy('created_at')
    .orderBy('id')
    .execute()

/** The client's released escrows with the agent that carry a receipt. */
export const releasesWith = (db: RentalDb, subject: string, did: string) =>
  db
    .selectFrom('escrows')
    .innerJoin('engagements', 'engagements.id', 'escrows.engagement_id')
    .select(['escrows.id', 'escrows.task_id', 'escrows.release_receipt_id'])
    .where('escrows.client_subject', '=', subject)
    .where('engagements.client_subject', '=', subject)
    .where('engagements.agent_did', '=', did)
    .where('escrows.release_receipt_id', 'is not', null)
    .execute()

/** Task counts and first/last activity, for one client (subject given) or across all clients. */
export async function taskStats(db: RentalDb, did: string, subject?: string) {
  let query = db
    .selectFrom('tasks')
    .select([
      sql<number>`count(*) filter (where state = 'completed')`.as('completed'),
      sql<number>`count(*) filter (where state = 'failed')`.as('failed'),
      sql<number>`count(*) filter (where state in ('submitted', 'working'))`.as('running'),
      sql<Date | null>`min(created_at)`.as('first'),
      sql<Date | null>`max(coalesce(completed_at, created_at))`.as('last'),
    ])
    .where('agent_did', '=', did)
  if (subject !== undefined) query = query.where('client_subject', '=', subject)
  const row = await query.executeTakeFirstOrThrow()
  const at = (v: Date | string | null) => (v === null ? null : new Date(v).toISOString())
  return {
    tasks_completed: Number(row.completed),
    tasks_failed: Number(row.failed),
    tasks_running: Number(row.running),
    first_activity: at(row.first),
    last_activity: at(row.last),
  }
}

export const revocationOf = (db: RentalDb, subject: string, did: string) =>
  db
    .selectFrom('agent_revocations')
    .selectAll()
    .where('client_subject', '=', subject)
    .where('agent_did', '=', did)
    .executeTakeFirst()

/** The first answer of the client's revoke of the agent, as kept in idempotent_answers. */
export async function revokeAnswer(db: RentalDb, subject: string, did: string) {
  const row = await db
    .selectFrom('idempotent_answers')
    .select('body')
    .where('client_subject', '=', subject)
    .where('scope', '=', REVOKE_SCOPE)
    .where('key', '=', did)
    .executeTakeFirst()
  return row?.body as Record<string, unknown> | undefined
}

/** Outbox rows (the rental's own receipts) by id, oldest first. */
export const outboxRows = (db: RentalDb, ids: string[]) =>
  ids.length === 0
    ? Promise.resolve([])
    : db
        .selectFrom('receipt_outbox')
        .select(['id', 'receipt_type', 'subject', 'envelope', 'leaf_hash', 'created_at', 'ledger_index'])
        .where('id', 'in', ids)
        .orderBy('created_at')
        .orderBy('id')
        .execute()

import type { RentalDb } from '../../db.ts'

/** Clients' revocations of agents (table agent_revocations). */
export const isRevoked = async (db: RentalDb, orgId: string, agentDid: string) =>
  Boolean(
    await db
      .selectFrom('agent_revocations')
      .select('agent_did')
      .where('org_id', '=', orgId)
      .where('agent_did', '=', agentDid)
      .executeTakeFirst(),
  )

/** Records a client's revocation of an agent (the revoke route and tests use it). */
export async function revokeAgent(db: RentalDb, orgId: string, agentDid: string, reason: string) {
  await db
    .insertInto('agent_revocations')
    .values({ org_id: orgId, agent_did: agentDid, reason })
    .onConflict((oc) => oc.columns(['org_id', 'agent_did']).doNothing())
    .execute()
}

/** Inserts the revocation; undefined when the client had already revoked the agent. */
export const insertRevocation = (db: RentalDb, orgId: string, did: string, reason: string, at: Date) =>
  db
    .insertInto('agent_revocations')
    .values({ org_id: orgId, agent_did: did, reason, revoked_at: at })
    .onConflict((oc) => oc.columns(['org_id', 'agent_did']).doNothing())
    .returning(['revoked_at'])
    .executeTakeFirst()

export const revocationOf = (db: RentalDb, orgId: string, did: string) =>
  db
    .selectFrom('agent_revocations')
    .selectAll()
    .where('org_id', '=', orgId)
    .where('agent_did', '=', did)
    .executeTakeFirst()

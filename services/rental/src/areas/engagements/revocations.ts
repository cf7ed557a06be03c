import type { RentalContext } from '../../context.ts'
import type { RentalDb } from '../../db.ts'
import * as store from './revocation-store.ts'

/** What other areas may ask of clients' revocations of agents. */
export interface RevocationRecords {
  isRevoked(orgId: string, agentDid: string): Promise<boolean>
  /** Records the revocation in `trx`; undefined when the client had already revoked the agent. */
  revoke(
    trx: RentalDb,
    orgId: string,
    agentDid: string,
    reason: string,
    at: Date,
  ): Promise<{ revoked_at: Date } | undefined>
  revocationOf(orgId: string, agentDid: string): ReturnType<typeof store.revocationOf>
}

export const revocationRecords = (ctx: RentalContext): RevocationRecords => ({
  isRevoked: (orgId, did) => store.isRevoked(ctx.db, orgId, did),
  revoke: store.insertRevocation,
  revocationOf: (orgId, did) => store.revocationOf(ctx.db, orgId, did),
})

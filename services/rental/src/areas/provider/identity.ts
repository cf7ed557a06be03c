import { createHash } from 'node:crypto'
import { type Sealer, singletonDidKey } from '@svc/kit'
import type { RentalDb } from '../../db.ts'

/** The rental's own did:key and the Ed25519 seed behind it. */
export interface ProviderIdentity {
  did: string
  seed: Uint8Array
}

/**
 * The provider identity: made on first start, the same ever after (and on every instance). It
 * names the provider in offer packages and signs the rental's receipts (the ReceiptWriter's issuer).
 */
export const providerIdentity = (db: RentalDb, sealer: Sealer): Promise<ProviderIdentity> =>
  singletonDidKey(db, sealer, { table: 'provider_identity', context: 'rental-provider-identity' })

/**
 * How the client is named in what leaves the rental (receipts, CVs): the client DID of its latest
 * engagement with the agent, else the session's DID, else a pairwise hash of the subject (the same
 * client gets another value for each agent, so two agents cannot link it).
 */
export function clientRef(
  providerDid: string,
  subject: string,
  agentDid: string,
  known: { engagementDid?: string | undefined; sessionDid?: string | null | undefined },
): { client_did: string } | { client_pairwise: string } {
  const did = known.engagementDid ?? known.sessionDid ?? undefined
  if (did) return { client_did: did }
  const hash = createHash('sha256')
    .update(`svc-rental-client\n${providerDid}\n${agentDid}\n${subject}`)
    .digest('hex')
  return { client_pairwise: `sha256:${hash}` }
}

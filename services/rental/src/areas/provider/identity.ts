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

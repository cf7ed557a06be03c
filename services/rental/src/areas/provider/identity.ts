import type { Sealer } from '@svc/kit'
import { didKeyFromEd25519 } from '@svc/trust/did-key'
import { ed25519FromSeed, generateEd25519 } from '@svc/trust/ed25519'
import type { RentalDb } from '../../db.ts'

/** The rental's own did:key and the Ed25519 seed behind it. */
export interface ProviderIdentity {
  did: string
  seed: Uint8Array
}

const CONTEXT = 'rental-provider-identity'

/**
 * The provider identity: made on first start, the same ever after (and on every instance). It
 * names the provider in offer packages and signs the rental's receipts (the ReceiptWriter's issuer).
 */
export async function providerIdentity(db: RentalDb, sealer: Sealer): Promise<ProviderIdentity> {
  const fresh = generateEd25519()
  await db
    .insertInto('provider_identity')
    .values({
      id: 1,
      did: didKeyFromEd25519(fresh.publicKey),
      seed_sealed: sealer.seal(fresh.seed, CONTEXT),
    })
    .onConflict((oc) => oc.column('id').doNothing())
    .execute()
  const row = await db
    .selectFrom('provider_identity')
    .select(['did', 'seed_sealed'])
    .where('id', '=', 1)
    .executeTakeFirstOrThrow()
  const seed = new Uint8Array(sealer.open(row.seed_sealed, CONTEXT))
  if (didKeyFromEd25519(ed25519FromSeed(seed).publicKey) !== row.did)
    throw new Error('the stored provider identity does not match its key')
  return { did: row.did, seed }
}

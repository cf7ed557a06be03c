import { type Sealer, singletonDidKey, singletonKey } from '@svc/kit'
import { didKeyFromEd25519 } from '@svc/trust/did-key'
import { generateEd25519 } from '@svc/trust/ed25519'
import { generateMlDsa65 } from '@svc/trust/mldsa'
import type { IdpDb } from '../../db.ts'

export interface Identity {
  did: string
  seed: Uint8Array
}

const userContext = (userId: string) => `user-key:${userId}`

/** A new did:key: an Ed25519 key sealed to its owner's context, so a copied row does not open. */
export function newDidKey(sealer: Sealer, context: string) {
  const keys = generateEd25519()
  return { did: didKeyFromEd25519(keys.publicKey), key_sealed: sealer.seal(keys.seed, context) }
}

/** The seed of an account's did:key, opened from its sealed form. */
export const openUserKey = (sealer: Sealer, userId: string, sealed: Buffer) =>
  new Uint8Array(sealer.open(sealed, userContext(userId)))

/** A new account's did:key. */
export const newUserKey = (sealer: Sealer, userId: string) => newDidKey(sealer, userContext(userId))

/** The issuer's ledger identity, created on first start and the same ever after. */
export const issuerIdentity = (db: IdpDb, sealer: Sealer): Promise<Identity> =>
  singletonDidKey(db, sealer, { table: 'issuer_identity', context: 'issuer-identity' })

/** A further 32-byte seed of the issuer, made on first start, sealed, the same ever after. */
const issuerSeed = (
  db: IdpDb,
  sealer: Sealer,
  column: 'mldsa_seed_sealed' | 'witness_seed_sealed',
  context: string,
) => singletonKey(db, sealer, { table: 'issuer_identity', column, context })

/** The issuer's ML-DSA-65 key (FIPS 204). */
export const issuerPqKey = async (db: IdpDb, sealer: Sealer) =>
  generateMlDsa65(await issuerSeed(db, sealer, 'mldsa_seed_sealed', 'issuer-mldsa'))

/** The seed of the issuer's witness cosigning key (C2SP tlog-cosignature). */
export const issuerWitnessSeed = (db: IdpDb, sealer: Sealer) =>
  issuerSeed(db, sealer, 'witness_seed_sealed', 'issuer-witness')

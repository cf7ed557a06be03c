import type { Generated } from 'kysely'

/** The tables of the identity area. */
export interface IdentityTables {
  issuer_identity: {
    id: number
    did: string
    seed_sealed: Buffer
    created_at: Generated<Date>
    mldsa_seed_sealed: Generated<Buffer | null>
    witness_seed_sealed: Generated<Buffer | null>
  }
}

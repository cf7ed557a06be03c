import type { Generated } from 'kysely'

/** The provider identity: one row, the rental's did:key and its sealed seed (kept by the kit's singletonDidKey). */
export interface ProviderTables {
  provider_identity: { id: number; did: string; seed_sealed: Buffer; created_at: Generated<Date> }
}

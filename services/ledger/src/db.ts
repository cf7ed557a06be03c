import type { Generated, Kysely, Transaction } from 'kysely'

/** The ledger's tables, as Kysely sees them. */
export interface LedgerTables {
  tree_state: { singleton: boolean; size: number; root_hash: Buffer }
  leaves: {
    leaf_index: number
    leaf_hash: Buffer
    entry: Buffer
    receipt_type: string
    issuer_did: string
    subject: string
    issued_at: Date
    writer: string
    integrated_at: Generated<Date>
  }
  tree_nodes: { level: number; node_index: number; hash: Buffer }
  checkpoints: { tree_size: number; root_hash: Buffer; note: string; created_at: Generated<Date> }
  webhooks: WebhookTable['webhooks']
  cosignatures: {
    tree_size: number
    witness: string
    signature_line: string
    cosigned_at: Date
    received_at: Generated<Date>
  }
}

export interface WebhookTable {
  webhooks: {
    id: string
    subscriber: string
    url: string
    events: string[]
    created_at: Generated<Date>
    deleted_at: Date | null
  }
}

export type LedgerDb = Kysely<LedgerTables> | Transaction<LedgerTables>

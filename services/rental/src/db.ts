import type { ColumnType, Generated, Kysely, Transaction } from 'kysely'

/** A jsonb column: read as the value, written as its JSON text. */
export type Json = ColumnType<unknown, string, string>

/** The rental's tables, as Kysely sees them. */
export interface RentalTables {
  console_sessions: {
    id_hash: Buffer
    subject: string
    idp_sid: string | null
    csrf_token_hash: Buffer
    name: string | null
    email: string | null
    client_did: string | null
    created_at: Generated<Date>
    expires_at: Date
    ended_at: Date | null
  }
  idp_clients: {
    issuer: string
    client_id: string
    client_secret_sealed: Buffer
    redirect_uri: string
    backchannel_logout_uri: string
    updated_at: Generated<Date>
  }
  agents: {
    id: string
    did: string
    name: string
    description: string
    card_url: string
    endpoint: string
    skills: ColumnType<unknown[], string, string>
    updated_at: Generated<Date>
  }
  jobs: {
    id: string
    title: string
    profile: string
    outcome: string
    description: string
    price_fils: number
    currency: Generated<string>
    created_at: Generated<Date>
  }
  job_agents: { job_id: string; agent_id: string }
  api_tokens: {
    id: string
    owner_subject: string
    label: string
    token_hash: Buffer
    prefix: string
    scopes: string[]
    engagement_ids: string[] | null
    expires_at: Date | null
    created_at: Generated<Date>
    rotated_at: Date | null
    revoked_at: Date | null
  }
  rail_accounts: {
    id: string
    kind: 'wallet' | 'escrow' | 'payout' | 'platform' | 'external'
    currency: Generated<string>
    allow_negative: Generated<boolean>
    created_at: Generated<Date>
  }
  rail_transfers: {
    id: string
    idempotency_key: string
    kind: string
    request_digest: string
    memo: ColumnType<Record<string, unknown>, string, string>
    created_at: Generated<Date>
  }
  rail_postings: { transfer_id: string; account_id: string; amount: number }
  provider_identity: { id: number; did: string; seed_sealed: Buffer; created_at: Generated<Date> }
  engagements: {
    id: string
    client_subject: string
    client_did: string
    job_id: string
    agent_id: string
    agent_did: string
    provider_did: string
    price_fils: number
    currency: Generated<string>
    state: 'pending' | 'active'
    sla: Json
    sla_hash: string
    sla_signature: string | null
    created_at: Generated<Date>
    activated_at: Date | null
  }
  escrows: {
    id: string
    engagement_id: string
    client_subject: string
    task_id: string | null
    amount_fils: number
    currency: Generated<string>
    body: Json
    hash: string
    state: 'offered' | 'open' | 'released'
    signature: string | null
    open_transfer_id: string | null
    opened_at: Date | null
    fee_fils: number | null
    release_instruction: Json | null
    release_signature: string | null
    release_transfer_id: string | null
    release_receipt_id: string | null
    release_answer: Json | null
    released_at: Date | null
    created_at: Generated<Date>
  }
  tasks: {
    id: string
    engagement_id: string
    client_subject: string
    agent_did: string
    state: 'submitted' | 'working' | 'completed' | 'failed' | 'canceled'
    async: boolean
    price_fils: number
    input_text: string | null
    input_sha256: string
    output: Json | null
    output_text: string | null
    output_sha256: string | null
    output_expires_at: Date | null
    output_removed_at: Date | null
    agent_task_id: string | null
    agent_result: Json | null
    agent_signature: string | null
    receipt_id: string | null
    receipt_leaf_hash: string | null
    error: string | null
    runs: Json | null
    created_at: Generated<Date>
    started_at: Date | null
    completed_at: Date | null
  }
  agent_revocations: {
    client_subject: string
    agent_did: string
    reason: string
    revoked_at: Generated<Date>
  }
  idempotent_answers: {
    client_subject: string
    scope: string
    key: string
    request_digest: string
    status: number
    body: Json
    created_at: Generated<Date>
  }
  /** Created by the kit's ReceiptWriter (packages/kit/src/receipts/outbox-store.ts). */
  receipt_outbox: {
    id: string
    receipt_type: string
    subject: string
    envelope: unknown
    leaf_hash: Buffer
    created_at: Generated<Date>
    delivered_at: Date | null
    ledger_index: number | null
  }
}

export type RentalDb = Kysely<RentalTables> | Transaction<RentalTables>

export const inTransaction = <T>(db: RentalDb, work: (trx: RentalDb) => Promise<T>) =>
  (db as Kysely<RentalTables>).transaction().execute(work)

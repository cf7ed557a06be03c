import type { ColumnType, Generated, Kysely, Transaction } from 'kysely'

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
}

export type RentalDb = Kysely<RentalTables> | Transaction<RentalTables>

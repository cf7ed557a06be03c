import type { Generated, Kysely, Transaction } from 'kysely'

export interface IdpTables {
  signing_keys: {
    kid: string
    alg: 'RS256' | 'ES256' | 'EdDSA'
    public_jwk: Record<string, unknown>
    private_key_enc: Buffer
    created_at: Generated<Date>
    activates_at: Date
    retired_at: Date | null
    expires_at: Date | null
  }
  clients: {
    client_id: string
    client_name: string
    client_type: 'confidential' | 'public'
    first_party: boolean
    subject_type: 'public' | 'pairwise'
    token_endpoint_auth_method: 'client_secret_basic' | 'client_secret_post' | 'private_key_jwt' | 'none'
    jwks: { keys: Array<Record<string, unknown>> } | null
    redirect_uris: string[]
    post_logout_redirect_uris: string[]
    allowed_origins: string[]
    backchannel_logout_uri: string | null
    frontchannel_logout_uri: string | null
    client_secret_hash: Buffer | null
    webhook_secret_sealed: Buffer
    created_at: Generated<Date>
    updated_at: Generated<Date>
    organization_id: string | null
    deleted_at: Date | null
    lifecycle_webhook_url: string | null
    did: string | null
    key_sealed: Buffer | null
    agent_model: { model: string; version?: string; provider?: string } | null
    workload: { scheme: 'spiffe' | 'entra'; external_id: string; issuer: string; bound_at: string } | null
  }
  users: {
    id: string
    email: string
    email_verified_at: Date | null
    name: string | null
    password_hash: string | null
    did: string | null
    key_sealed: Buffer | null
    created_at: Generated<Date>
    deleted_at: Date | null
    disabled_at: Date | null
  }
  issuer_identity: {
    id: number
    did: string
    seed_sealed: Buffer
    created_at: Generated<Date>
    mldsa_seed_sealed: Generated<Buffer | null>
    witness_seed_sealed: Generated<Buffer | null>
  }
  retention_holds: {
    user_id: string
    reason: string
    placed_at: Generated<Date>
    deletion_requested_at: Date | null
  }
  witness_logs: {
    origin: string
    verifier_key: string
    tree_size: Generated<number>
    root_hash: Buffer | null
    checkpoint: string | null
    updated_at: Generated<Date>
  }
  witness_cosignatures: {
    id: Generated<number>
    origin: string
    tree_size: number
    root_hash: Buffer
    checkpoint: string
    cosigned_at: Date
  }
  witness_evidence: {
    id: Generated<number>
    origin: string
    kind: 'fork' | 'inconsistent'
    cosigned_checkpoint: string
    presented_request: string
    observed_at: Generated<Date>
  }
  constitutions: { hash: string; document: Record<string, unknown>; published_at: Generated<Date> }
  known_devices: {
    user_id: string
    device_hash: Buffer
    first_seen_at: Generated<Date>
    last_seen_at: Generated<Date>
  }
  sessions: {
    id_hash: Buffer
    sid: string
    user_id: string
    amr: string[]
    acr: string
    auth_time: Date
    created_at: Generated<Date>
    expires_at: Date
    ended_at: Date | null
    ip: string | null
    user_agent: string | null
  }
  security_events: {
    id: string
    user_id: string
    type: string
    ip: string | null
    user_agent: string | null
    created_at: Generated<Date>
  }
  authorization_codes: {
    code_hash: Buffer
    client_id: string
    user_id: string
    sid: string
    redirect_uri: string
    scope: string[]
    nonce: string | null
    code_challenge: string
    auth_time: Date
    acr: string
    amr: string[]
    created_at: Generated<Date>
    expires_at: Date
    used_at: Date | null
    family_id: Generated<string | null>
    resource: string | null
    task_id: string | null
    dpop_jkt: string | null
    access_token_jti: Generated<string | null>
    access_token_expires_at: Generated<Date | null>
  }
  email_tokens: {
    token_hash: Buffer
    user_id: string
    purpose: 'verify_email' | 'reset_password'
    created_at: Generated<Date>
    expires_at: Date
    used_at: Date | null
  }
  dev_outbox: { id: string; recipient: string; subject: string; body: string; created_at: Generated<Date> }
  totp_credentials: {
    user_id: string
    secret_sealed: Buffer
    confirmed_at: Date | null
    last_step: Generated<number>
  }
  consents: {
    user_id: string
    client_id: string
    granted: string[]
    decided: string[]
    updated_at: Generated<Date>
    commitment: string | null
    purpose: string | null
    granted_at: Date | null
  }
  credential_offers: {
    id: string
    code_hash: Buffer
    user_id: string
    configuration_ids: string[]
    tx_code_hash: Buffer | null
    tx_code_failures: Generated<number>
    created_at: Generated<Date>
    expires_at: Date
    redeemed_at: Date | null
  }
  pushed_requests: {
    uri_hash: Buffer
    client_id: string
    params: Record<string, string>
    expires_at: Date
    used_at: Date | null
  }
  device_codes: {
    device_code_hash: Buffer
    user_code: string
    client_id: string
    scope: string[]
    resource: string | null
    status: Generated<'pending' | 'approved' | 'denied'>
    interval_s: number
    last_polled_at: Date | null
    created_at: Generated<Date>
    expires_at: Date
    user_id: string | null
    sid: string | null
    auth_time: Date | null
    acr: string | null
    amr: string[] | null
    consumed_at: Date | null
  }
  resources: {
    id: string
    identifier: string
    name: string
    scopes: string[]
    mcp: boolean
    created_at: Generated<Date>
    organization_id: Generated<string | null>
  }
  passkeys: {
    id: string
    user_id: string
    public_key: Buffer
    counter: Generated<string>
    transports: Generated<string[]>
    backed_up: Generated<boolean>
    created_at: Generated<Date>
    last_used_at: Date | null
  }
  refresh_tokens: {
    token_hash: Buffer
    family_id: string
    client_id: string
    user_id: string
    sid: string
    scope: string[]
    auth_time: Date
    acr: string
    amr: string[]
    created_at: Generated<Date>
    expires_at: Date
    rotated_at: Date | null
    revoked_at: Date | null
    resource: string | null
    dpop_jkt: string | null
    task_id: string | null
  }
  organizations: {
    id: string
    name: string
    contact_email: string
    api_key_hash: Buffer
    did: string
    key_sealed: Buffer
    domain: string | null
    domain_verified: Generated<boolean>
    agent_deny_list: Generated<string[]>
    require_member_mfa: Generated<boolean>
    max_clients: Generated<number>
    token_rate_limit_per_min: Generated<number>
    created_at: Generated<Date>
    updated_at: Generated<Date>
    disabled_at: Date | null
    business: { entity_name: string; jurisdiction?: string; registration?: string } | null
  }
  lifecycle_deliveries: {
    id: string
    client_id: string
    event: string
    body: string
    status: Generated<'pending' | 'delivered' | 'failed'>
    attempts: Generated<number>
    last_status: number | null
    last_error: string | null
    created_at: Generated<Date>
    delivered_at: Date | null
  }
  email_changes: {
    token_hash: Buffer
    user_id: string
    new_email: string
    expires_at: Date
    used_at: Date | null
  }
  inbound_activity: {
    receipt_hash: string
    user_id: string
    client_id: string
    receipt_type: string
    issuer: string
    issued_at: Date
    received_at: Generated<Date>
  }
  ssf_streams: {
    client_id: string
    delivery: 'push' | 'poll'
    endpoint_url: string | null
    created_at: Generated<Date>
    updated_at: Generated<Date>
  }
  ssf_events: {
    jti: string
    client_id: string
    event_type: string
    claims: Record<string, unknown>
    token: string | null
    created_at: Generated<Date>
    delivered_at: Date | null
  }
  org_members: {
    organization_id: string
    user_id: string
    role: 'admin' | 'member'
    created_at: Generated<Date>
  }
  org_invites: {
    token_hash: Buffer
    organization_id: string
    email: string
    role: 'admin' | 'member'
    created_at: Generated<Date>
    expires_at: Date
    accepted_at: Date | null
    accepted_by: string | null
  }
  approvals: {
    id: string
    client_id: string
    user_id: string
    action: string
    detail: Record<string, unknown> | null
    status: Generated<'pending' | 'approved' | 'denied' | 'expired'>
    created_at: Generated<Date>
    expires_at: Date
    decided_at: Date | null
    last_polled_at: Date | null
    receipt: string | null
  }
  task_grants: {
    id: string
    user_id: string
    client_id: string
    purpose: string
    max_uses: number
    uses: Generated<number>
    ceiling: Record<string, unknown> | null
    resource: string | null
    created_at: Generated<Date>
    expires_at: Date
    ended_at: Date | null
  }
}

export type IdpDb = Kysely<IdpTables> | Transaction<IdpTables>

/** Runs `work` in one transaction (an IdpDb may be either kind; a transaction inside one is refused by Kysely). */
export const inTransaction = <T>(db: IdpDb, work: (trx: IdpDb) => Promise<T>) =>
  (db as Kysely<IdpTables>).transaction().execute(work)

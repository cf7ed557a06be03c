-- The rental's own identity: the did:key that signs offer packages and receipts (the seed sealed).
create table provider_identity (
  id smallint primary key check (id = 1),
  did text not null,
  seed_sealed bytea not null,
  created_at timestamptz not null default now()
);

-- A client hires an agent for a job: pending until the client signs the SLA body, then active.
create table engagements (
  id text primary key,
  client_subject text not null,
  client_did text not null,
  job_id text not null references jobs (id),
  agent_id text not null,
  agent_did text not null,
  provider_did text not null,
  price_fils bigint not null check (price_fils >= 0),
  currency text not null default 'AED' check (currency = 'AED'),
  state text not null check (state in ('pending', 'active')),
  -- the SLA body as signed (JCS of it is what the signature covers) and its sha256:<hex>
  sla jsonb not null,
  sla_hash text not null unique,
  sla_signature text,
  created_at timestamptz not null default now(),
  activated_at timestamptz
);
create index engagements_client_idx on engagements (client_subject, created_at desc, id desc);

-- Money held for a task: offered (body to sign), open (wallet → escrow), released (escrow → payout and fee).
create table escrows (
  id text primary key,
  engagement_id text not null references engagements (id),
  client_subject text not null,
  -- the task it pays for: the package's escrow is bound to the engagement's first task
  task_id text,
  amount_fils bigint not null check (amount_fils > 0),
  currency text not null default 'AED' check (currency = 'AED'),
  body jsonb not null,
  hash text not null unique,
  state text not null check (state in ('offered', 'open', 'released')),
  signature text,
  open_transfer_id text,
  opened_at timestamptz,
  fee_fils bigint,
  release_instruction jsonb,
  release_signature text,
  release_transfer_id text,
  release_receipt_id text,
  -- the first release's answer, given again to every later identical request
  release_answer jsonb,
  released_at timestamptz,
  created_at timestamptz not null default now()
);
create index escrows_engagement_idx on escrows (engagement_id, created_at, id);
create unique index escrows_task_idx on escrows (task_id) where task_id is not null;

-- A task sent to the engagement's agent over A2A. submitted → working → completed | failed.
create table tasks (
  id text primary key,
  engagement_id text not null references engagements (id),
  client_subject text not null,
  agent_did text not null,
  state text not null check (state in ('submitted', 'working', 'completed', 'failed')),
  async boolean not null,
  price_fils bigint not null check (price_fils >= 0),
  -- the input, kept only until the task ends (an async run needs it)
  input_text text,
  input_sha256 text not null,
  output jsonb,
  output_text text,
  output_sha256 text,
  output_expires_at timestamptz,
  output_removed_at timestamptz,
  agent_task_id text,
  agent_result jsonb,
  agent_signature text,
  receipt_id text,
  receipt_leaf_hash text,
  error text,
  -- each failed attempt: [{attempt, at, error}]; null for a task that never failed
  runs jsonb,
  created_at timestamptz not null default now(),
  started_at timestamptz,
  completed_at timestamptz
);
create index tasks_client_idx on tasks (client_subject, created_at desc, id desc);
create index tasks_output_expiry_idx on tasks (output_expires_at) where output is not null;

-- A client's kill switch on an agent: no new task for that agent under any of the client's engagements.
create table agent_revocations (
  client_subject text not null,
  agent_did text not null,
  reason text not null,
  revoked_at timestamptz not null default now(),
  primary key (client_subject, agent_did)
);

-- Idempotency-Key answers: a replay with the same key and request gets the first answer.
create table idempotent_answers (
  client_subject text not null,
  scope text not null,
  key text not null,
  request_digest text not null,
  status integer not null,
  body jsonb not null,
  created_at timestamptz not null default now(),
  primary key (client_subject, scope, key)
);

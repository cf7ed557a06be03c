-- Disputes: a client challenges money held (open escrows) or paid (released escrows) for a task or
-- an engagement. open → responded (the agent's provider organization or an operator) → resolved
-- (an operator: client, provider or split); open or responded → withdrawn (the client). While a
-- dispute is open or responded, the escrows it covers (dispute_escrows) are frozen: no release.
create table disputes (
  id text primary key,
  org_id text not null references orgs (id),
  engagement_id text not null,
  task_id text,
  agent_did text not null,
  currency text not null default 'AED',
  amount_fils bigint not null check (amount_fils > 0),
  reason text not null,
  -- {task_ids: [...], receipt_leaf_hashes: [...]}
  evidence jsonb not null,
  state text not null check (state in ('open', 'responded', 'resolved', 'withdrawn')),
  response text,
  response_evidence jsonb,
  outcome text check (outcome in ('client', 'provider', 'split')),
  client_fils bigint,
  provider_fils bigint,
  -- the resolution body, its JCS + Ed25519 signature by the provider identity, and what it moved
  resolution jsonb,
  resolution_signature text,
  settlement jsonb,
  receipt_id text,
  opened_by text,
  created_at timestamptz not null,
  updated_at timestamptz not null
);
create index disputes_org_idx on disputes (org_id, created_at desc, id);
create index disputes_agent_idx on disputes (agent_did, created_at desc, id);

-- The escrows a dispute covers (the task's, or the engagement's opened ones), in settling order.
create table dispute_escrows (
  dispute_id text not null references disputes (id),
  escrow_id text not null references escrows (id),
  position integer not null,
  primary key (dispute_id, escrow_id)
);
create index dispute_escrows_escrow_idx on dispute_escrows (escrow_id);

-- Insurance: a policy bought on an engagement (the premium paid from the client's wallet into
-- platform:insurance when it starts), at most one active per engagement; claims against it,
-- paid (from platform:insurance, the shortfall from external:insurance_reserve) up to what is left
-- of the coverage, each covered event paid at most once (the partial unique index), or refused.
create table insurance_policies (
  id text primary key,
  org_id text not null references orgs (id),
  engagement_id text not null references engagements (id),
  currency text not null default 'AED',
  coverage_fils bigint not null check (coverage_fils > 0),
  premium_fils bigint not null check (premium_fils > 0),
  covers text[] not null,
  starts_at timestamptz not null,
  ends_at timestamptz not null check (ends_at > starts_at),
  state text not null check (state in ('active', 'ended')),
  premium_transfer_id text not null,
  created_by text,
  created_at timestamptz not null
);
create unique index insurance_policies_active_idx on insurance_policies (engagement_id) where state = 'active';
create index insurance_policies_org_idx on insurance_policies (org_id, created_at desc);

create table insurance_claims (
  id text primary key,
  policy_id text not null references insurance_policies (id),
  org_id text not null references orgs (id),
  event_type text not null check (event_type in ('failed_task', 'sla_breach', 'incident')),
  -- what the claim is about: failed_task:<task id>, sla_breach:<event id>, incident:<incident id>
  event_key text not null,
  evidence jsonb not null,
  requested_fils bigint not null check (requested_fils > 0),
  paid_fils bigint not null default 0,
  state text not null check (state in ('paid', 'refused')),
  refuse_reason text,
  transfer_id text,
  created_by text,
  created_at timestamptz not null
);
create unique index insurance_claims_paid_idx on insurance_claims (policy_id, event_key) where state = 'paid';
create index insurance_claims_policy_idx on insurance_claims (policy_id, created_at, id);

-- Opening disputes and buying insurance: owners, admins and the billing role (as refunds).
update rental_roles set permissions = permissions || array['disputes:write']
  where name in ('owner', 'admin', 'billing') and not ('disputes:write' = any (permissions));
update rental_roles set permissions = permissions || array['insurance:write']
  where name in ('owner', 'admin', 'billing') and not ('insurance:write' = any (permissions));

-- Organizations: the tenants that register their own clients and resources with an API key
-- (svc_org_…, only its SHA-256 kept). A disabled organization's clients are unknown everywhere.
create table organizations (
  id text primary key,
  name text not null,
  contact_email text not null,
  api_key_hash bytea not null unique check (octet_length(api_key_hash) = 32),
  did text not null unique,
  key_sealed bytea not null,
  domain text,
  domain_verified boolean not null default false,
  agent_deny_list text[] not null default '{}',
  require_member_mfa boolean not null default false,
  max_clients integer not null default 10 check (max_clients between 0 and 100000),
  token_rate_limit_per_min integer not null default 30 check (token_rate_limit_per_min between 0 and 1000000),
  created_at timestamptz not null default now(),
  updated_at timestamptz not null default now(),
  disabled_at timestamptz
);

-- a client belongs to the platform (no organization) or to one organization; deleting one keeps
-- its row (codes, consents and receipts name it) but makes it unknown
alter table clients add column organization_id text references organizations (id);
alter table clients add column deleted_at timestamptz;
create index clients_organization_idx on clients (organization_id) where deleted_at is null;

-- an organization registers its own resources; the platform's have none
alter table resources add column organization_id text references organizations (id);

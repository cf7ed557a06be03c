-- The tenant API (/v1): organization keys, the secrets vault, custom roles, member profiles and the
-- audit record's hash chain.

-- Organization keys (ork_…) are rows of api_tokens beside the agt_ tokens: listed, revoked and
-- verified by the same machinery; their scopes name /v1 permissions and the A2A scopes.
alter table api_tokens add column kind text not null default 'agt' check (kind in ('agt', 'org'));

-- A role is built in (immutable) or custom (PUT /v1/roles: a named set of existing permissions).
alter table rental_roles add column builtin boolean not null default false;
update rental_roles set builtin = true where name in ('owner', 'admin', 'member', 'billing', 'viewer');

-- A member's own profile (PATCH /v1/users/me); the locale column already exists (0037).
alter table org_members add column display_name text;
alter table org_members add column notifications jsonb not null default '{}';

-- The per-tenant vault: a named secret sealed under the service key (the context binds the
-- organization and the name, so a sealed value copied to another row does not open). Its value is
-- never answered; a connection or webhook names it as secret://name.
create table tenant_secrets (
  org_id text not null references orgs (id),
  name text not null check (name ~ '^[a-z][a-z0-9_.-]{0,63}$'),
  version integer not null,
  sealed bytea not null,
  created_by text,
  created_at timestamptz not null default now(),
  updated_at timestamptz not null default now(),
  primary key (org_id, name)
);

-- The audit record's hash chain, one per organization: an event's place in its organization's
-- chain (1, 2, …, in commit order) and SHA-256(previous hash, the event's canonical form). Filled by
-- the events area's durable consumer `audit-chain`, which also backfills the events before this
-- migration on its first run. The head is each chain's last place and hash (a removed last entry is
-- seen against it).
alter table rental_events add column chain_pos bigint;
alter table rental_events add column chain_hash text;
create unique index rental_events_chain_idx on rental_events (org_id, chain_pos) where chain_pos is not null;
create table rental_audit_chains (
  org_id text primary key,
  last_pos bigint not null,
  last_hash text not null,
  updated_at timestamptz not null default now()
);

-- New permissions: keys (organization keys: owners and admins), secrets, custom roles, connections,
-- and each member's own profile.
update rental_roles set permissions = permissions || array['keys:write']
  where name in ('owner', 'admin') and not ('keys:write' = any (permissions));
update rental_roles set permissions = permissions || array['secrets:read', 'secrets:write', 'roles:write']
  where name in ('owner', 'admin') and not ('secrets:write' = any (permissions));
update rental_roles set permissions = permissions || array['secrets:read']
  where name = 'member' and not ('secrets:read' = any (permissions));
update rental_roles set permissions = permissions || array['connections:read', 'profile:write']
  where name in ('owner', 'admin', 'member', 'billing', 'viewer') and not ('profile:write' = any (permissions));

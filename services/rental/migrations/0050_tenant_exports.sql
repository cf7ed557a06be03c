-- A tenant export (POST /v1/tenant/exports): one job per request that gathers the organization's
-- records area by area into one zip archive, kept sealed (AES-256-GCM under the service key, bound
-- to the export's id and organization) until it expires seven days after it is ready; the expired
-- archive's bytes are dropped, its row stays (the record of the export).
create table tenant_exports (
  id text primary key,
  org_id text not null references orgs (id),
  requested_by text not null,
  state text not null check (state in ('queued', 'running', 'ready', 'failed', 'expired')),
  sections_done integer not null default 0,
  sections_total integer not null,
  section text,
  left_out text[] not null default '{}',
  error text,
  archive_sealed bytea,
  archive_bytes integer,
  archive_sha256 text,
  created_at timestamptz not null default now(),
  completed_at timestamptz,
  expires_at timestamptz
);
create index tenant_exports_org_idx on tenant_exports (org_id, created_at desc);
create index tenant_exports_expiry_idx on tenant_exports (expires_at) where archive_sealed is not null;

-- The export permission: owners and admins (the archive holds the organization's whole record).
update rental_roles set permissions = permissions || array['exports:write']
  where name in ('owner', 'admin') and not ('exports:write' = any (permissions));

-- Retention and legal holds (the retention area).
-- retention_policies: how long an organization keeps its task texts and outputs, its files and its
-- events, in seconds (1 day to 10 years); no row: the defaults (areas/retention/policy.ts).
create table retention_policies (
  org_id text primary key references orgs (id),
  tasks_s integer not null check (tasks_s between 86400 and 315360000),
  files_s integer not null check (files_s between 86400 and 315360000),
  events_s integer not null check (events_s between 86400 and 315360000),
  updated_by text,
  updated_at timestamptz not null
);

-- retention_holds: a legal hold over an organization's data (engagement_id null) or one
-- engagement's, by an operator or the organization's owner, until released. The reason is kept
-- only as its SHA-256 (as in its data.retention.hold receipt): it may name a case or a person.
create table retention_holds (
  id text primary key,
  org_id text not null references orgs (id),
  engagement_id text,
  reason_sha256 text not null,
  placed_by_type text not null check (placed_by_type in ('operator', 'owner')),
  placed_by text,
  placed_at timestamptz not null,
  receipt_id text not null,
  released_at timestamptz,
  released_by_type text check (released_by_type in ('operator', 'owner')),
  released_by text,
  release_reason_sha256 text,
  release_receipt_id text
);
create index retention_holds_org_idx on retention_holds (org_id, placed_at desc);
create index retention_holds_active_idx on retention_holds (org_id) where released_at is null;

-- retention_sweep: the one row naming the retention job's pending run, so that instances starting
-- together keep one chain of runs (each run enqueues the next).
create table retention_sweep (
  id integer primary key check (id = 1),
  job_id text,
  last_run_at timestamptz
);
insert into retention_sweep (id) values (1);

update rental_roles set permissions = permissions || array['retention:read']
  where name in ('owner', 'admin') and not ('retention:read' = any (permissions));
update rental_roles set permissions = permissions || array['retention:write']
  where name in ('owner', 'admin') and not ('retention:write' = any (permissions));
update rental_roles set permissions = permissions || array['retention:hold']
  where name = 'owner' and not ('retention:hold' = any (permissions));

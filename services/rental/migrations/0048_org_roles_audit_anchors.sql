-- Custom roles belong to an organization: another organization neither sees nor assigns them, and
-- two organizations may each have a role of the same name. Built-in roles stay global (org_id null).
alter table rental_roles add column org_id text references orgs (id);
-- an existing custom role is its holders' organization's (PUT /v1/roles let one organization hold
-- a name), else the organization that last saved it (its role.saved event); an orphan is dropped
update rental_roles set org_id = (
  select m.org_id from org_members m where m.role = rental_roles.name order by m.created_at limit 1
) where not builtin;
update rental_roles set org_id = (
  select e.org_id from rental_events e
  where e.type = 'role.saved' and e.subjects ->> 'role' = rental_roles.name
  order by e.seq desc limit 1
) where not builtin and org_id is null;
delete from rental_roles where not builtin and org_id is null;
-- a member's role is a built-in name or one of its organization's (checked by the orgs area)
alter table org_members drop constraint org_members_role_fkey;
alter table rental_roles drop constraint rental_roles_pkey;
create unique index rental_roles_builtin_idx on rental_roles (name) where org_id is null;
create unique index rental_roles_org_idx on rental_roles (org_id, name) where org_id is not null;

-- The audit chain's heads published to the ledger (an `audit.anchored` receipt through the
-- outbox): a chain rewritten whole, links and head alike, no longer matches the ledger's head.
create table rental_audit_anchors (
  org_id text not null,
  pos bigint not null,
  hash text not null,
  receipt_id text not null,
  anchored_at timestamptz not null default now(),
  primary key (org_id, pos)
);
-- the anchoring job's chain of runs (one pending run, as retention's sweep keeps it)
create table rental_audit_anchor_run (
  id integer primary key check (id = 1),
  job_id text,
  last_run_at timestamptz
);
insert into rental_audit_anchor_run (id) values (1);

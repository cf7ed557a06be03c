-- Tenants and roles. Every signed-in client belongs to a client organization; what a client owned
-- (API tokens, engagements, escrows, tasks, revocations, idempotent answers, the wallet) now
-- belongs to its organization. Existing rows move to one organization per existing subject, the
-- subject its owner.

-- A role is data: its permissions are rows here, read at each check (custom roles come later).
create table rental_roles (
  name text primary key check (name ~ '^[a-z][a-z0-9_-]{0,39}$'),
  permissions text[] not null,
  description text not null
);

insert into rental_roles (name, permissions, description) values
  ('owner', array['org:read', 'members:write', 'members:owners', 'tokens:read', 'tokens:write',
    'engagements:read', 'engagements:write', 'tasks:read', 'tasks:write', 'money:read',
    'releases:write', 'record:read', 'agents:revoke'], 'everything, and makes other owners'),
  ('admin', array['org:read', 'members:write', 'tokens:read', 'tokens:write', 'engagements:read',
    'engagements:write', 'tasks:read', 'tasks:write', 'money:read', 'releases:write', 'record:read',
    'agents:revoke'], 'everything but making owners'),
  ('member', array['org:read', 'tokens:read', 'tokens:write', 'engagements:read', 'engagements:write',
    'tasks:read', 'tasks:write', 'record:read'], 'hires agents and runs tasks'),
  ('billing', array['org:read', 'engagements:read', 'money:read', 'releases:write'],
    'money views and releases only'),
  ('viewer', array['org:read', 'tokens:read', 'engagements:read', 'tasks:read', 'record:read'],
    'reads only');

create table orgs (
  id text primary key,
  name text not null,
  created_at timestamptz not null default now()
);

-- A member is a joined idp subject, or an invitation by email (subject null) until its first
-- sign-in with that email, verified at the idp.
create table org_members (
  id text primary key,
  org_id text not null references orgs (id),
  subject text,
  email text,
  role text not null references rental_roles (name),
  invited_by text,
  created_at timestamptz not null default now(),
  joined_at timestamptz,
  check (subject is not null or email is not null)
);
-- a subject is in one organization at a time; an organization invites an email once (several
-- organizations may: the oldest invitation is taken, and none says whom another one invited)
create unique index org_members_subject_idx on org_members (subject) where subject is not null;
create unique index org_members_invite_idx on org_members (org_id, lower(email)) where subject is null;
create index org_members_org_idx on org_members (org_id, created_at, id);

-- whether the idp said the session's email is verified (invitations and operators by email)
alter table console_sessions add column email_verified boolean not null default false;

-- one organization per subject already known, the subject its owner
create temporary table subject_orgs on commit drop as
  select subject, 'org_' || substr(md5('org:' || subject), 1, 24) as org_id
  from (
    select subject from console_sessions
    union select owner_subject from api_tokens
    union select client_subject from engagements
    union select client_subject from escrows
    union select client_subject from tasks
    union select client_subject from agent_revocations
    union select client_subject from idempotent_answers
  ) as known;

insert into orgs (id, name) select org_id, 'Organization' from subject_orgs;
insert into org_members (id, org_id, subject, role, joined_at)
  select 'mem_' || substr(md5('member:' || subject), 1, 24), org_id, subject, 'owner', now() from subject_orgs;

update api_tokens t set owner_subject = s.org_id from subject_orgs s where t.owner_subject = s.subject;
update engagements t set client_subject = s.org_id from subject_orgs s where t.client_subject = s.subject;
update escrows t set client_subject = s.org_id from subject_orgs s where t.client_subject = s.subject;
update tasks t set client_subject = s.org_id from subject_orgs s where t.client_subject = s.subject;
update agent_revocations t set client_subject = s.org_id from subject_orgs s where t.client_subject = s.subject;
update idempotent_answers t set client_subject = s.org_id from subject_orgs s where t.client_subject = s.subject;

alter table api_tokens rename column owner_subject to org_id;
-- who made the token: its scopes were capped by that member's permissions at creation
alter table api_tokens add column created_by text;
alter table engagements rename column client_subject to org_id;
alter table escrows rename column client_subject to org_id;
alter table tasks rename column client_subject to org_id;
alter table agent_revocations rename column client_subject to org_id;

-- the organization pays: wallet:<subject> becomes wallet:<organization>, its grant key too
insert into rail_accounts (id, kind, currency, allow_negative, created_at)
  select 'wallet:' || s.org_id, a.kind, a.currency, a.allow_negative, a.created_at
  from rail_accounts a join subject_orgs s on a.id = 'wallet:' || s.subject;
update rail_postings p set account_id = 'wallet:' || s.org_id
  from subject_orgs s where p.account_id = 'wallet:' || s.subject;
delete from rail_accounts a using subject_orgs s where a.id = 'wallet:' || s.subject;
update rail_transfers t set idempotency_key = 'wallet-grant:' || s.org_id
  from subject_orgs s where t.idempotency_key = 'wallet-grant:' || s.subject;

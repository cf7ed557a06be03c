-- Ratings, references and incidents.
-- task_ratings: one rating (1..5, an optional comment) of a completed task by the organization
-- that ran it, bound to the task's `task.completed` receipt (its id and ledger leaf hash are
-- copied here, not null): no receipt, no rating. Edited within RENTAL_RATING_EDIT_WINDOW_S of
-- its creation; each edit is an event (rating.edited, with the score and comment before).
create table task_ratings (
  id text primary key,
  task_id text not null unique references tasks (id),
  org_id text not null references orgs (id),
  engagement_id text not null,
  agent_did text not null,
  score smallint not null check (score between 1 and 5),
  comment text,
  receipt_id text not null,
  receipt_leaf_hash text not null,
  edits integer not null default 0,
  created_by text,
  created_at timestamptz not null,
  updated_at timestamptz not null
);
create index task_ratings_agent_idx on task_ratings (agent_did, created_at desc, id);

-- engagement_references: the client's published statement about one engagement (one each:
-- publishing again replaces it, version + 1), shown with the organization's name only when
-- show_organization (consent), anonymous otherwise.
create table engagement_references (
  engagement_id text primary key references engagements (id),
  org_id text not null references orgs (id),
  agent_did text not null,
  statement text not null,
  show_organization boolean not null,
  version integer not null default 1,
  created_by text,
  created_at timestamptz not null,
  updated_at timestamptz not null
);
create index engagement_references_agent_idx on engagement_references (agent_did, updated_at desc);

-- incidents: reported by a client about one of its engagements (or an agent it hired; the
-- agent's provider organization is copied at report time) or by an operator about the platform
-- (kind 'platform', no organization). open → resolved, once. incident_notes: the timeline.
create table incidents (
  id text primary key,
  kind text not null check (kind in ('client', 'platform')),
  org_id text references orgs (id),
  engagement_id text,
  agent_did text,
  provider_org_id text,
  severity text not null check (severity in ('sev1', 'sev2', 'sev3', 'sev4')),
  summary text not null,
  impact text not null,
  state text not null check (state in ('open', 'resolved')),
  resolution text,
  resolved_at timestamptz,
  resolved_by text,
  reported_by text,
  created_at timestamptz not null,
  updated_at timestamptz not null,
  check ((kind = 'platform') = (org_id is null)),
  check ((state = 'resolved') = (resolved_at is not null))
);
create index incidents_org_idx on incidents (org_id, created_at desc, id);
create index incidents_provider_idx on incidents (provider_org_id, created_at desc, id);
create index incidents_open_idx on incidents (created_at desc) where state = 'open';

create table incident_notes (
  id text primary key,
  incident_id text not null references incidents (id),
  author text not null check (author in ('reporter', 'provider', 'operator')),
  org_id text,
  text text not null,
  created_by text,
  created_at timestamptz not null
);
create index incident_notes_incident_idx on incident_notes (incident_id, created_at, id);

-- rating tasks and publishing references, reporting and noting incidents: owners, admins and
-- members; reading incidents: every role
update rental_roles set permissions = permissions || array['ratings:write']
  where name in ('owner', 'admin', 'member') and not ('ratings:write' = any (permissions));
update rental_roles set permissions = permissions || array['incidents:read']
  where not ('incidents:read' = any (permissions));
update rental_roles set permissions = permissions || array['incidents:write']
  where name in ('owner', 'admin', 'member') and not ('incidents:write' = any (permissions));

-- Teams and delegation (areas/teams, docs/architecture.md "Rental: teams and delegation").
-- teams: a lead agent and member agents with the team terms (jsonb: members with their DIDs,
-- shares in basis points and hop price, who may delegate to whom, max depth, per-task budget).
-- engagement_id: the one engagement on the lead made by POST /api/teams/{id}/hire, whose SLA body
-- binds the terms. end_answer: the end as first answered (members' shares paid once).
create table teams (
  id text primary key,
  org_id text not null references orgs (id),
  name text not null,
  lead_did text not null,
  job_id text not null,
  terms jsonb not null,
  terms_hash text not null,
  state text not null check (state in ('draft', 'hired', 'ended')),
  engagement_id text unique references engagements (id),
  end_answer jsonb,
  created_by text,
  created_at timestamptz not null,
  hired_at timestamptz,
  ended_at timestamptz
);
create index teams_org_idx on teams (org_id, created_at desc, id);

-- team_hops: the delegation tree of a team task. The root (depth 0, parent null) is the lead's
-- run of the task itself; each other row is one delegation asked by its parent's agent through
-- POST /api/team-hops with the parent's credential (token_hash: SHA-256 of the bearer, valid
-- while the parent runs). state: running, completed, failed, refused (refusal: the rule named).
create table team_hops (
  id text primary key,
  team_id text not null references teams (id),
  task_id text not null references tasks (id),
  parent_id text references team_hops (id),
  depth integer not null,
  agent_did text not null,
  state text not null check (state in ('running', 'completed', 'failed', 'refused')),
  refusal text,
  error text,
  cost_fils bigint not null default 0,
  input_sha256 text,
  output_sha256 text,
  agent_result jsonb,
  agent_signature text,
  output jsonb,
  receipt_id text,
  receipt_leaf_hash text,
  token_hash bytea unique,
  token_expires_at timestamptz,
  created_at timestamptz not null,
  ended_at timestamptz
);
create index team_hops_task_idx on team_hops (task_id, created_at, id);
-- one root per task, whatever attempts of the task race
create unique index team_hops_root_idx on team_hops (task_id) where parent_id is null;

-- creating and hiring teams, giving them tasks and ending them: owners, admins and members
update rental_roles set permissions = permissions || array['teams:write']
  where name in ('owner', 'admin', 'member') and not ('teams:write' = any (permissions));

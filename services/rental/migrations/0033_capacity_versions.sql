-- Capacity and agent versions, the engagement's terms after hire.
--
-- Capacity: an engagement's limits on its tasks, kept on its row so that task creation reads them
-- with the engagement it reads anyway (no extra query when none is set): at most
-- `max_concurrent_tasks` unfinished tasks (counted under the engagement's row lock), at most
-- `tasks_per_minute` new ones a minute (counted in the kv, shared by the rental instances).
-- Null: no limit.
alter table engagements
  add column max_concurrent_tasks integer check (max_concurrent_tasks between 1 and 10000),
  add column tasks_per_minute integer check (tasks_per_minute between 1 and 100000),
  add column capacity_updated_at timestamptz,
  -- the agent version the engagement is on: the latest at hire (null: none released then), then
  -- each one the client accepted by a signed addendum
  add column agent_version text;

-- the capacity count: an engagement's unfinished tasks
create index tasks_engagement_unfinished_idx on tasks (engagement_id)
  where state in ('submitted', 'working', 'input-required');
-- the agent version the task was sent to (null: the initial one)
alter table tasks add column agent_version text;

-- Versions of an agent its provider released: semver, changelog, the hash of the agent card at
-- that version; `seq` orders them (each release is above the previous one in semver precedence).
create table agent_versions (
  agent_did text not null,
  version text not null check (length(version) <= 100),
  seq bigserial not null,
  changelog text not null check (length(changelog) <= 5000),
  card_hash text not null,
  provider_org_id text not null,
  released_by text not null,
  receipt_id text not null,
  released_at timestamptz not null,
  primary key (agent_did, version)
);
create index agent_versions_latest_idx on agent_versions (agent_did, seq desc);

-- The addenda a client signed to move an engagement to a newer version (one per version reached).
create table engagement_addenda (
  engagement_id text not null references engagements (id),
  to_version text not null,
  org_id text not null,
  from_version text,
  card_hash text not null,
  body jsonb not null,
  hash text not null,
  signature text not null,
  receipt_id text not null,
  accepted_by text not null,
  accepted_at timestamptz not null,
  primary key (engagement_id, to_version)
);

-- setting an engagement's capacity is engagements:write (owners, admins and members have it already)
-- releasing an agent's version (a provider's act): owners and admins
update rental_roles set permissions = permissions || array['versions:write']
  where name in ('owner', 'admin') and not ('versions:write' = any (permissions));

-- Connect's second auth mode: a connection authenticated with an access token the rental obtains
-- from the idp for a resource registered there (RFC 8707 `resource=`, RFC 9728 metadata discovered
-- from the tool server). Such a connection stores no secret: its resource identifier only.
alter table connections drop constraint connections_auth_mode_check;
alter table connections add constraint connections_auth_mode_check
  check (auth_mode in ('api_key', 'idp_resource'));
alter table connections alter column key_sealed drop not null;
alter table connections alter column key_hint drop not null;
alter table connections add column resource text;
alter table connections add constraint connections_auth_secret_check
  check ((auth_mode = 'api_key' and key_sealed is not null) or (auth_mode = 'idp_resource' and resource is not null));

-- The web pages an agent fetched (or was refused) through the rental for a task: the engagement's
-- web policy counts them per task. The page itself is not kept: its hash is.
create table web_fetches (
  id text primary key,
  org_id text not null,
  engagement_id text not null references engagements (id),
  task_id text not null,
  agent_did text not null,
  url text not null,
  final_url text,
  state text not null check (state in ('fetched', 'refused', 'failed')),
  reason text,
  status integer,
  bytes integer,
  content_sha256 text,
  receipt_id text,
  receipt_leaf_hash text,
  created_at timestamptz not null
);
create index web_fetches_task_idx on web_fetches (task_id, state);
create index web_fetches_engagement_idx on web_fetches (engagement_id, created_at desc);

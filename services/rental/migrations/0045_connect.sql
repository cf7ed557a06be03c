-- Connect: an engagement bound to a client's MCP tool server (one binding per engagement). The
-- key is kept sealed (AES-256-GCM under the service key, the row's id as additional data) and
-- never answered; revoking deletes the row. Health (last success, last error, latency) is kept
-- on the row. connect_actions: every tool call an agent asked for (kept after a revoke);
-- connect_task_tokens: the short-lived credentials a task's agent calls tools with (SHA-256 only).
create table connections (
  id text primary key,
  org_id text not null,
  engagement_id text not null unique references engagements (id),
  url text not null,
  auth_mode text not null check (auth_mode in ('api_key')),
  key_sealed bytea not null,
  key_hint text not null,
  server_name text,
  server_version text,
  -- the tools the key reached at bind: [{name, title, description, input_schema, annotations}]
  tools jsonb not null,
  -- what the client allows: [{name, approval: 'never' | 'always'}]
  allowed jsonb not null,
  calls integer not null default 0,
  failures integer not null default 0,
  last_success_at timestamptz,
  last_error_at timestamptz,
  last_error text,
  last_latency_ms integer,
  created_by text,
  created_at timestamptz not null
);
create index connections_org_idx on connections (org_id, created_at desc);

create table connect_actions (
  id text primary key,
  org_id text not null,
  engagement_id text not null references engagements (id),
  connection_id text not null,
  task_id text not null,
  agent_did text not null,
  tool text not null,
  -- kept until the call is made (an approved call runs later), then cleared
  arguments jsonb,
  arguments_sha256 text not null,
  state text not null check (state in ('pending_approval', 'approved', 'running', 'completed', 'failed',
    'timed_out', 'refused', 'rejected', 'canceled')),
  reason text,
  approval_id text,
  decided_by text,
  result jsonb,
  result_sha256 text,
  latency_ms integer,
  attempts integer not null default 0,
  requested_at timestamptz not null,
  ended_at timestamptz,
  receipt_id text,
  receipt_leaf_hash text
);
create index connect_actions_engagement_idx on connect_actions (engagement_id, requested_at desc, id desc);
create index connect_actions_org_idx on connect_actions (org_id, requested_at desc);

create table connect_task_tokens (
  token_sha256 text primary key,
  task_id text not null,
  org_id text not null,
  engagement_id text not null,
  expires_at timestamptz not null
);
create index connect_task_tokens_expiry_idx on connect_task_tokens (expires_at);

-- a tool call the policy holds is an approval of kind tool_call (its task keeps running)
alter table approvals drop constraint approvals_kind_check;
alter table approvals add constraint approvals_kind_check check (kind in ('policy', 'agent_input', 'tool_call'));
alter table approvals add column action_id text;
drop index approvals_task_pending_idx;
create unique index approvals_task_pending_idx on approvals (task_id) where state = 'pending' and kind <> 'tool_call';

update rental_roles set permissions = permissions || array['connect:read']
  where name in ('owner', 'admin', 'member', 'viewer') and not ('connect:read' = any (permissions));
update rental_roles set permissions = permissions || array['connect:write']
  where name in ('owner', 'admin') and not ('connect:write' = any (permissions));

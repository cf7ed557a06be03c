-- Approvals: a task held for a member's decision waits in `input-required`; a rejected one ends
-- as `rejected` (final, never charged). An approval is asked by the engagement's policy (`policy`)
-- or by the agent itself (`agent_input`: an A2A input-required or auth-required answer).
alter table tasks drop constraint tasks_state_check;
alter table tasks
  add constraint tasks_state_check check (state in ('submitted', 'working', 'input-required', 'completed',
    'failed', 'canceled', 'rejected'));

create table approvals (
  id text primary key,
  org_id text not null,
  -- deferred: the approval may be written before the task row in the task's own transaction
  task_id text not null references tasks (id) deferrable initially deferred,
  engagement_id text not null references engagements (id),
  kind text not null check (kind in ('policy', 'agent_input')),
  state text not null check (state in ('pending', 'approved', 'rejected', 'expired', 'canceled')),
  price_fils bigint not null,
  text_sha256 text not null,
  text_preview text not null,
  -- agent_input: what the agent asked, the A2A state it answered, and its task to answer on
  question text,
  agent_state text check (agent_state in ('input-required', 'auth-required')),
  agent_task_id text,
  agent_context_id text,
  requested_by_type text not null,
  requested_by_id text,
  requested_at timestamptz not null,
  expires_at timestamptz not null,
  decided_by text,
  decided_at timestamptz,
  note text,
  receipt_id text,
  receipt_leaf_hash text
);
create index approvals_org_idx on approvals (org_id, requested_at desc, id desc);
create index approvals_pending_idx on approvals (expires_at) where state = 'pending';
-- a task waits on one approval at a time
create unique index approvals_task_pending_idx on approvals (task_id) where state = 'pending';

-- who may see and decide approvals: everyone who reads tasks sees them; owners and admins decide
update rental_roles set permissions = permissions || array['approvals:read']
  where name in ('owner', 'admin', 'member', 'viewer') and not ('approvals:read' = any (permissions));
update rental_roles set permissions = permissions || array['approvals:write']
  where name in ('owner', 'admin') and not ('approvals:write' = any (permissions));

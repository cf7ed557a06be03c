-- Schedules: a task made for an engagement at each tick of a 5-field cron expression in an IANA
-- time zone. The scheduler claims a due tick by moving `next_run_at` on (a conditional update) in
-- the transaction that writes the task, so each tick makes one task, whatever the instances.
create table schedules (
  id text primary key,
  org_id text not null,
  engagement_id text not null references engagements (id),
  name text,
  text text not null,
  cron text not null,
  timezone text not null,
  -- deleted: kept for the events that name it, answered as not found
  state text not null check (state in ('active', 'paused', 'deleted')),
  -- the tick the scheduler takes next; null unless active
  next_run_at timestamptz,
  -- why it was paused by the scheduler (its engagement took no task), null when a member paused it
  paused_reason text,
  fired_count integer not null default 0,
  failed_count integer not null default 0,
  -- ticks skipped in all catch-ups (a rental that was down runs one late tick, not every one it missed)
  missed_count integer not null default 0,
  last_fired_at timestamptz,
  last_tick_at timestamptz,
  last_task_id text,
  last_error text,
  last_error_at timestamptz,
  -- the last catch-up: the tick it ran for, the ticks it skipped, when
  catch_up jsonb,
  created_by text,
  created_at timestamptz not null default now(),
  updated_at timestamptz not null default now(),
  check ((state = 'active') = (next_run_at is not null))
);
create index schedules_due_idx on schedules (next_run_at) where state = 'active';
create index schedules_org_idx on schedules (org_id, created_at, id) where state <> 'deleted';

-- who may read and change schedules: those who run tasks change them, those who read tasks read them
update rental_roles set permissions = permissions || array['schedules:read', 'schedules:write']
  where name in ('owner', 'admin', 'member');
update rental_roles set permissions = permissions || array['schedules:read']
  where name = 'viewer';

-- A running task's lease (docs/operations.md, Tasks after faults): `lease_owner` the rental instance
-- that runs its attempt (null while its run job waits in the queue), `lease_until` when the lease
-- ends; `run_job` the one run job that may run it (a stale job finds another named and does
-- nothing); `retry_at` when the next attempt starts, while the task waits for it; `run_round` how
-- many times the client retried it (the A2A message id of its run changes with it).
alter table tasks
  add column lease_owner text,
  add column lease_until timestamptz,
  add column run_job text,
  add column retry_at timestamptz,
  add column run_round integer not null default 0;
create index tasks_lease_idx on tasks (lease_until) where state in ('submitted', 'working');

-- The rental's instances, each heartbeating every `period_s`: one silent for three periods, or
-- `stopped_at` (it closed, or another instance started at its `address`, host and port), has
-- stopped, and what it ran is taken back.
create table rental_instances (
  id text primary key,
  address text not null,
  pid integer not null,
  period_s integer not null,
  started_at timestamptz not null default now(),
  heartbeat_at timestamptz not null default now(),
  stopped_at timestamptz
);

-- Tasks running when this release is installed: a sync task a crash left in `working` had no job
-- behind it; each running task gets a lease, so the sweep takes back whatever no run holds by then.
update tasks set lease_until = now() + interval '5 minutes' where state in ('submitted', 'working');

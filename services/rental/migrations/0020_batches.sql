-- Batches: up to 1000 task texts under one engagement, run with bounded concurrency. Each item
-- becomes one task; the item's task_id is written in the task's own transaction (unique), so an
-- item never has two tasks, whatever crashes.
create table rental_batches (
  id text primary key,
  org_id text not null,
  engagement_id text not null,
  name text,
  concurrency integer not null check (concurrency between 1 and 20),
  total integer not null check (total between 1 and 1000),
  state text not null check (state in ('running', 'completed', 'completed_with_errors', 'canceled')),
  -- items ended when the last batch.progressed event was recorded (progress is throttled)
  reported integer not null default 0,
  created_by_type text not null,
  created_by_id text,
  created_at timestamptz not null default now(),
  started_at timestamptz,
  finished_at timestamptz
);
create index rental_batches_org_idx on rental_batches (org_id, created_at desc, id desc);

create table rental_batch_items (
  batch_id text not null references rental_batches (id),
  idx integer not null check (idx >= 0),
  -- kept only until the item's task is made (the task keeps its input while it runs), then null
  text text,
  state text not null default 'queued' check (state in ('queued', 'running', 'completed', 'failed', 'canceled')),
  task_id text unique,
  -- why the item failed without a task (the engagement ended, the agent was revoked, …)
  error text,
  started_at timestamptz,
  finished_at timestamptz,
  primary key (batch_id, idx),
  check ((state = 'queued') = (task_id is null and error is null)),
  check ((state = 'queued') = (text is not null))
);
create index rental_batch_items_state_idx on rental_batch_items (batch_id, state, idx);

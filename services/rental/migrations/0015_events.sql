-- One record of what happened: every state change is a row here, written in the same transaction
-- as the change. Read by the task event streams (by stream and its sequence), by the durable
-- consumers (outbound webhooks: in commit order, by transaction id) and as the audit record.
create table rental_events (
  seq bigserial primary key,
  -- the writing transaction: a consumer reads only what every older transaction has settled
  txid xid8 not null default pg_current_xact_id(),
  org_id text,
  type text not null,
  -- the stream the event belongs to (a task's id) and its place in it (1, 2, …), or null
  stream text,
  stream_seq integer,
  -- the ids the event is about: { task_id, engagement_id, approval_id, … }
  subjects jsonb not null default '{}',
  actor_type text not null check (actor_type in ('user', 'token', 'schedule', 'batch', 'operator', 'agent', 'system')),
  actor_id text,
  ip text,
  request_id text,
  data jsonb not null default '{}',
  created_at timestamptz not null default now(),
  check ((stream is null) = (stream_seq is null))
);
create unique index rental_events_stream_idx on rental_events (stream, stream_seq) where stream is not null;
create index rental_events_org_idx on rental_events (org_id, seq);
create index rental_events_txid_idx on rental_events (txid, seq);

-- A stream's last sequence: the upsert that numbers an event also orders writers of one stream.
create table rental_event_streams (
  stream text primary key,
  last_seq integer not null
);

-- Where each durable consumer of the log stands: the (txid, seq) of the last event it took.
create table rental_event_cursors (
  name text primary key,
  txid xid8 not null default '0',
  seq bigint not null default 0,
  updated_at timestamptz not null default now()
);

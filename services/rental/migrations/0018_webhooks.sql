-- Outbound webhooks: an organization's subscriptions to event types, and one delivery per event
-- per webhook (its id is the `webhook-id` header, the same on every retry), with each attempt.
create table webhooks (
  id text primary key,
  org_id text not null,
  url text not null,
  -- the event types subscribed, or {'*'} for all
  event_types text[] not null,
  description text,
  -- the signing secret (whsec_…), sealed with RENTAL_ENCRYPTION_KEY (context: the webhook's id)
  secret_sealed bytea not null,
  created_by text,
  -- where its webhook.created event stands in the log (transaction, seq): later events are delivered
  created_txid xid8 not null default pg_current_xact_id(),
  created_seq bigint not null,
  created_at timestamptz not null default now(),
  deleted_at timestamptz
);
create index webhooks_org_idx on webhooks (org_id, created_at desc, id) where deleted_at is null;

create table webhook_deliveries (
  id text primary key,
  webhook_id text not null references webhooks (id),
  org_id text not null,
  event_id text not null,
  -- the event's place in the log (deliveries are listed newest event first)
  event_seq bigint not null,
  event_type text not null,
  -- the exact body sent on every attempt
  payload text not null,
  state text not null check (state in ('pending', 'delivered', 'failed', 'canceled')),
  -- [{attempt, at, status, duration_ms, error}]
  attempts jsonb not null default '[]',
  next_attempt_at timestamptz,
  created_at timestamptz not null default now(),
  ended_at timestamptz,
  unique (webhook_id, event_id)
);
create index webhook_deliveries_webhook_idx on webhook_deliveries (webhook_id, event_seq desc);

-- webhooks:read for every role that reads the organization's integrations; webhooks:write for
-- those that manage them (a webhook sends the organization's events to a URL of its choosing)
update rental_roles set permissions = permissions || array['webhooks:read']
  where name in ('owner', 'admin', 'member', 'viewer');
update rental_roles set permissions = permissions || array['webhooks:write']
  where name in ('owner', 'admin');

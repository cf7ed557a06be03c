-- Subscribers to log events. No secret is stored: a webhook's signing secret is derived from
-- the ledger's webhook key and the webhook id (HMAC), and shown once at creation.
create table webhooks (
  id text primary key,
  subscriber text not null,
  url text not null,
  events text[] not null,
  created_at timestamptz not null default now(),
  deleted_at timestamptz
);
create index webhooks_subscriber_idx on webhooks (subscriber) where deleted_at is null;

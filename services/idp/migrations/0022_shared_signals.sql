-- Shared signals (OpenID SSF 1.0): a client's one stream, pushed (RFC 8935) to its endpoint or
-- polled (RFC 8936). Each event is kept for its receiver until delivered or acknowledged; the
-- SET's claims are fixed when the event happens, and it is signed once, when first sent.
create table ssf_streams (
  client_id text primary key references clients (client_id),
  delivery text not null check (delivery in ('push', 'poll')),
  endpoint_url text,
  created_at timestamptz not null default now(),
  updated_at timestamptz not null default now(),
  check ((delivery = 'push') = (endpoint_url is not null))
);

create table ssf_events (
  jti text primary key,
  client_id text not null references clients (client_id),
  event_type text not null,
  claims jsonb not null,
  token text,
  created_at timestamptz not null default now(),
  delivered_at timestamptz
);
create index ssf_events_backlog_idx on ssf_events (client_id, created_at) where delivered_at is null;

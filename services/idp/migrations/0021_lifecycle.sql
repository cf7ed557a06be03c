-- Lifecycle webhooks: each client may name an https URL told of its users' account events.
-- Every event to every client is a delivery, kept with its exact body (retries send the same
-- bytes) and its outcome, for the admin to see.
alter table clients add column lifecycle_webhook_url text;
create table lifecycle_deliveries (
  id text primary key,
  client_id text not null references clients (client_id),
  event text not null,
  body text not null,
  status text not null default 'pending' check (status in ('pending', 'delivered', 'failed')),
  attempts integer not null default 0,
  last_status integer,
  last_error text,
  created_at timestamptz not null default now(),
  delivered_at timestamptz
);
create index lifecycle_deliveries_client_idx on lifecycle_deliveries (client_id, created_at);

-- A change of address waits for a click on the link sent to the new one (only its SHA-256 kept).
create table email_changes (
  token_hash bytea primary key check (octet_length(token_hash) = 32),
  user_id text not null references users (id),
  new_email text not null,
  expires_at timestamptz not null,
  used_at timestamptz
);

-- A deleted account keeps an anonymous row (codes, receipts and grants name it); it never signs in again.
alter table users add column deleted_at timestamptz;

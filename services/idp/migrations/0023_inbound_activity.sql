-- Activity a client relays from the ledger about one of its users (a receipt.recorded event),
-- kept once per receipt (content-addressed on the receipt's leaf hash) for the user to see.
create table inbound_activity (
  receipt_hash text primary key,
  user_id text not null references users (id),
  client_id text not null references clients (client_id),
  receipt_type text not null,
  issuer text not null,
  issued_at timestamptz not null,
  received_at timestamptz not null default now()
);
create index inbound_activity_user_idx on inbound_activity (user_id, received_at);

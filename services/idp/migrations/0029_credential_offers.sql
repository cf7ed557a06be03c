-- OpenID4VCI credential offers: a signed-in user offers their identity credential to a wallet.
-- Only the SHA-256 of the pre-authorized code is kept, and of the transaction code (tx_code) the
-- SHA-256 of code and tx_code together, so the table alone opens neither. An offer lives five
-- minutes and gives one access token (redeemed_at); five wrong transaction codes end it.
create table credential_offers (
  id text primary key,
  code_hash bytea not null unique check (octet_length(code_hash) = 32),
  user_id text not null references users (id),
  configuration_ids text[] not null,
  tx_code_hash bytea check (octet_length(tx_code_hash) = 32),
  tx_code_failures integer not null default 0,
  created_at timestamptz not null default now(),
  expires_at timestamptz not null,
  redeemed_at timestamptz
);
create index credential_offers_user on credential_offers (user_id);

-- The issuer's own ledger identity: an Ed25519 key whose did:key signs the idp's self-receipts.
-- One row; the seed is sealed with the encryption key.
create table issuer_identity (
  id smallint primary key check (id = 1),
  did text not null,
  seed_sealed bytea not null,
  created_at timestamptz not null default now()
);

-- Every account has a did:key (the `did` claim first-party clients see, the subject of its receipts).
alter table users add column did text;
alter table users add column key_sealed bytea;
create unique index users_did_idx on users (did);

-- Browsers a user has signed in from: a random cookie per browser, only its SHA-256 kept.
create table known_devices (
  user_id text not null references users (id),
  device_hash bytea not null check (octet_length(device_hash) = 32),
  first_seen_at timestamptz not null default now(),
  last_seen_at timestamptz not null default now(),
  primary key (user_id, device_hash)
);

-- The consent's commitment: the ledger leaf hash of its consent.granted receipt, what it was given
-- for and when.
alter table consents add column commitment text;
alter table consents add column purpose text;
alter table consents add column granted_at timestamptz;

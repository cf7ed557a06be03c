-- Links sent by email (address verification, password reset): single use, expiring, stored hashed.
create table email_tokens (
  token_hash bytea primary key check (octet_length(token_hash) = 32),
  user_id text not null references users (id),
  purpose text not null check (purpose in ('verify_email', 'reset_password')),
  created_at timestamptz not null default now(),
  expires_at timestamptz not null,
  used_at timestamptz
);

-- Where email goes when no mail server is configured (development): shown at /ui/dev/outbox.
create table dev_outbox (
  id text primary key,
  recipient text not null,
  subject text not null,
  body text not null,
  created_at timestamptz not null default now()
);

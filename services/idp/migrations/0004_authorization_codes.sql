-- Authorization codes: single use, short-lived; only the SHA-256 of the code is stored.
create table authorization_codes (
  code_hash bytea primary key check (octet_length(code_hash) = 32),
  client_id text not null references clients (client_id),
  user_id text not null references users (id),
  sid text not null,
  redirect_uri text not null,
  scope text[] not null,
  nonce text,
  code_challenge text not null,
  auth_time timestamptz not null,
  acr text not null,
  amr text[] not null,
  created_at timestamptz not null default now(),
  expires_at timestamptz not null,
  used_at timestamptz
);

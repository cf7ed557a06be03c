-- Refresh tokens rotate on every use. All the tokens descended from one authorization code form
-- a family: presenting a token that was already rotated away means it was stolen, and the whole
-- family dies (OAuth 2.0 Security BCP, refresh token rotation).
create table refresh_tokens (
  token_hash bytea primary key check (octet_length(token_hash) = 32),
  family_id text not null,
  client_id text not null references clients (client_id),
  user_id text not null references users (id),
  sid text not null,
  scope text[] not null,
  auth_time timestamptz not null,
  acr text not null,
  amr text[] not null,
  created_at timestamptz not null default now(),
  expires_at timestamptz not null,
  rotated_at timestamptz,
  revoked_at timestamptz
);
create index refresh_tokens_family_idx on refresh_tokens (family_id);

-- the family a code's exchange started, so a replayed code can revoke it
alter table authorization_codes add column family_id text;

-- API tokens (agt_…) for the A2A surface: only the SHA-256 of the plaintext is kept.
create table api_tokens (
  id text primary key,
  owner_subject text not null,
  label text not null,
  token_hash bytea not null unique check (octet_length(token_hash) = 32),
  prefix text not null,
  scopes text[] not null default '{}',
  engagement_ids text[],
  expires_at timestamptz,
  created_at timestamptz not null default now(),
  rotated_at timestamptz,
  revoked_at timestamptz
);

create index api_tokens_owner_idx on api_tokens (owner_subject, created_at) where revoked_at is null;

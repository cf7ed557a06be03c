-- WebAuthn credentials (passkeys). The id is the credential id (base64url), the public key its
-- COSE key; the signature counter is kept to notice a cloned authenticator.
create table passkeys (
  id text primary key,
  user_id text not null references users (id),
  public_key bytea not null,
  counter bigint not null default 0,
  transports text[] not null default '{}',
  backed_up boolean not null default false,
  created_at timestamptz not null default now(),
  last_used_at timestamptz
);
create index passkeys_user_idx on passkeys (user_id);

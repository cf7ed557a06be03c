-- A second factor: a TOTP secret (RFC 6238), sealed at rest. It counts once its first code is confirmed.
create table totp_credentials (
  user_id text primary key references users (id),
  secret_sealed bytea not null,
  confirmed_at timestamptz,
  -- the last 30-second step accepted: a code is never accepted twice
  last_step bigint not null default 0
);

-- Pushed authorization requests (RFC 9126): the parameters a client sent over the back channel,
-- named by a request_uri (only its SHA-256 kept), valid 90 s and good for one code.
create table pushed_requests (
  uri_hash bytea primary key check (octet_length(uri_hash) = 32),
  client_id text not null references clients (client_id),
  params jsonb not null,
  expires_at timestamptz not null,
  used_at timestamptz
);

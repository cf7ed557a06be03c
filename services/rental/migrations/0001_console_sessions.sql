-- Console sessions: the cookie carries a random id; only its SHA-256 is stored.
create table console_sessions (
  id_hash bytea primary key check (octet_length(id_hash) = 32),
  -- the idp's subject and session id, so a back-channel logout for `sid` ends this session
  subject text not null,
  idp_sid text,
  csrf_token_hash bytea not null,
  created_at timestamptz not null default now(),
  expires_at timestamptz not null,
  ended_at timestamptz
);

create index console_sessions_sid_idx on console_sessions (idp_sid) where ended_at is null;

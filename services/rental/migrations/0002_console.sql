-- Who signed in, as the idp told us at the callback (ID token and userinfo).
alter table console_sessions add column name text;
alter table console_sessions add column email text;
alter table console_sessions add column client_did text;

create index console_sessions_subject_idx on console_sessions (subject) where ended_at is null;

-- The console's own client at the idp, registered at start through the idp's management API.
-- The secret is needed to authenticate at /token, so it is sealed (AES-256-GCM), not hashed.
create table idp_clients (
  issuer text primary key,
  client_id text not null,
  client_secret_sealed bytea not null,
  redirect_uri text not null,
  backchannel_logout_uri text not null,
  updated_at timestamptz not null default now()
);

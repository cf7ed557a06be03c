create table users (
  id text primary key,
  email text not null,
  email_verified_at timestamptz,
  name text,
  -- argon2id in PHC form; null for an account that signs in with passkeys only
  password_hash text,
  created_at timestamptz not null default now()
);
create unique index users_email_idx on users (lower(email));

-- Sign-in sessions. The cookie carries a random id; only its SHA-256 is stored.
create table sessions (
  id_hash bytea primary key check (octet_length(id_hash) = 32),
  -- the session id that ID tokens and logout tokens carry (`sid`)
  sid text not null unique,
  user_id text not null references users (id),
  amr text[] not null,
  acr text not null,
  auth_time timestamptz not null,
  created_at timestamptz not null default now(),
  expires_at timestamptz not null,
  ended_at timestamptz,
  ip text,
  user_agent text
);
create index sessions_user_idx on sessions (user_id) where ended_at is null;

-- What the account page shows as security activity.
create table security_events (
  id text primary key,
  user_id text not null references users (id),
  type text not null,
  ip text,
  user_agent text,
  created_at timestamptz not null default now()
);
create index security_events_user_idx on security_events (user_id, created_at desc);

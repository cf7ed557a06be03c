-- Task-bounded grants: an authorization for one purpose, good for max_uses tokens until
-- expires_at, or until the user ends it. Every token issued under it spends one use.
create table task_grants (
  id text primary key,
  user_id text not null references users (id),
  client_id text not null references clients (client_id),
  purpose text not null,
  max_uses integer not null check (max_uses between 1 and 1000),
  uses integer not null default 0 check (uses between 0 and max_uses),
  ceiling jsonb,
  resource text,
  created_at timestamptz not null default now(),
  expires_at timestamptz not null,
  ended_at timestamptz
);
create index task_grants_user_idx on task_grants (user_id, expires_at);

alter table authorization_codes add column task_id text references task_grants (id);
alter table refresh_tokens add column task_id text references task_grants (id);

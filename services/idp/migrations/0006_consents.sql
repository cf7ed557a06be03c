-- What a user decided for a third-party client, scope by scope: `decided` is every scope the user
-- was asked about, `granted` the ones approved. A scope not yet decided brings the consent page back.
create table consents (
  user_id text not null references users (id),
  client_id text not null references clients (client_id),
  granted text[] not null,
  decided text[] not null,
  updated_at timestamptz not null default now(),
  primary key (user_id, client_id)
);

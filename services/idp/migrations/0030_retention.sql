-- Legal holds on an account's data (data.retention.hold): while one stands, the owner's deletion
-- closes the account but keeps its data, and the deletion is carried out when the hold ends.
create table retention_holds (
  user_id text primary key references users (id),
  reason text not null,
  placed_at timestamptz not null default now(),
  deletion_requested_at timestamptz
);

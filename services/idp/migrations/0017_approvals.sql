-- "Ask my human": a client asks the signed-in user to approve one action. Pending until the user
-- approves or refuses on the account page, or until expires_at, which is a refusal. Every outcome
-- is receipted on the ledger; `receipt` is the leaf hash of that receipt.
create table approvals (
  id text primary key,
  client_id text not null references clients (client_id),
  user_id text not null references users (id),
  action text not null check (char_length(action) between 1 and 300),
  detail jsonb,
  status text not null default 'pending' check (status in ('pending', 'approved', 'denied', 'expired')),
  created_at timestamptz not null default now(),
  expires_at timestamptz not null,
  decided_at timestamptz,
  last_polled_at timestamptz,
  receipt text
);
create index approvals_user_pending_idx on approvals (user_id) where status = 'pending';

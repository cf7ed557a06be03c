-- The built-in payment rail: a double-entry journal. Money moves only as a transfer whose postings
-- sum to zero (checked at commit); balances are derived from the postings; an idempotency key
-- makes a transfer happen once whatever the retries.
create table rail_accounts (
  -- wallet:<client>, escrow:<escrow id>, payout:<agent did>, platform:fees, external:funding
  id text primary key,
  kind text not null check (kind in ('wallet', 'escrow', 'payout', 'platform', 'external')),
  currency text not null default 'AED' check (currency = 'AED'),
  -- only a source of outside money may go below zero
  allow_negative boolean not null default false,
  created_at timestamptz not null default now()
);

create table rail_transfers (
  id text primary key,
  idempotency_key text not null unique,
  kind text not null,
  -- the SHA-256 of what was asked: the same key with another request is refused, not replayed
  request_digest text not null,
  memo jsonb not null default '{}',
  created_at timestamptz not null default now()
);

create table rail_postings (
  transfer_id text not null references rail_transfers (id),
  account_id text not null references rail_accounts (id),
  amount bigint not null check (amount <> 0),
  primary key (transfer_id, account_id)
);

create index rail_postings_account_idx on rail_postings (account_id);

create function rail_transfer_balances() returns trigger language plpgsql as $$
begin
  if (select sum(amount) from rail_postings where transfer_id = new.transfer_id) <> 0 then
    raise exception 'rail transfer % does not balance', new.transfer_id using errcode = '23514';
  end if;
  return null;
end
$$;

create constraint trigger rail_postings_balance
  after insert on rail_postings
  deferrable initially deferred
  for each row execute function rail_transfer_balances();

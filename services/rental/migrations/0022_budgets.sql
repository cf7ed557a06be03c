-- Budgets: a cap on spend per period (a UTC calendar month, or a custom [from, to)) for the
-- organization, one engagement or one agent. Spend is counted per budget and period in
-- rental_budget_periods, written in the transaction that commits the money with the budget row
-- locked (select … for update), so concurrent commits are serialised and never pass the limit;
-- `crossed` holds the thresholds already announced in the period (each event once).
create table rental_budgets (
  id text primary key,
  org_id text not null,
  name text,
  scope text not null check (scope in ('organization', 'engagement', 'agent')),
  engagement_id text,
  agent_did text,
  period text not null check (period in ('month', 'custom')),
  period_from timestamptz,
  period_to timestamptz,
  limit_fils bigint not null check (limit_fils > 0 and limit_fils <= 9007199254740991),
  thresholds integer[] not null,
  state text not null default 'active' check (state in ('active', 'deleted')),
  created_by text,
  created_at timestamptz not null default now(),
  updated_at timestamptz not null default now(),
  check ((scope = 'engagement') = (engagement_id is not null)),
  check ((scope = 'agent') = (agent_did is not null)),
  check ((period = 'custom') = (period_from is not null and period_to is not null)),
  check (period_from is null or period_from < period_to)
);
create index rental_budgets_org_idx on rental_budgets (org_id, created_at, id) where state = 'active';

create table rental_budget_periods (
  budget_id text not null references rental_budgets (id),
  period_start timestamptz not null,
  spent_fils bigint not null default 0 check (spent_fils >= 0),
  crossed integer[] not null default '{}',
  primary key (budget_id, period_start)
);

-- who may change budgets: those who hold the money; reading them is money:read
update rental_roles set permissions = permissions || array['budgets:write']
  where name in ('owner', 'admin', 'billing');

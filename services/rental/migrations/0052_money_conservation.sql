-- Money is conserved (docs/money.md). The rail's rule (areas/rail/rules.ts) names the external
-- accounts and what may move money through them; only external:funding may go below zero. The
-- column follows the rule (the rail reads the rule, not the column). external:insurance_reserve is
-- no longer a source of money: the insurance pool and the platform's reserve are platform accounts
-- that cannot go negative, funded by premiums and by fees.
update rail_accounts set allow_negative = (id = 'external:funding');

-- Who ended a task that did not complete: 'agent' (its error, an unverifiable result, no answer
-- after the retries), 'client' (its cancel, its kill switch, its rejected or expired approval, a
-- file of its own gone, its engagement's end). An insurance claim never pays what the client caused.
alter table tasks add column end_cause text check (end_cause in ('agent', 'client'));
update tasks set end_cause = 'client' where state in ('canceled', 'rejected');
update tasks set end_cause = case when error = 'agent revoked' or error like 'a file of the task is gone%'
  then 'client' else 'agent' end
  where state = 'failed';

-- Insurance is priced by the platform: a quote (the coverage capped by the money at risk, the
-- premium from the agent's measured rates) that the client buys as it is, before it expires.
create table insurance_quotes (
  id text primary key,
  org_id text not null references orgs (id),
  engagement_id text not null references engagements (id),
  currency text not null default 'AED',
  coverage_fils bigint not null check (coverage_fils > 0),
  premium_fils bigint not null check (premium_fils > 0),
  covers text[] not null,
  period_days integer not null check (period_days between 1 and 366),
  -- what the price was made of: money at risk, the rates measured, the loading
  basis jsonb not null,
  state text not null check (state in ('offered', 'bought')),
  expires_at timestamptz not null,
  created_by text,
  created_at timestamptz not null
);
create index insurance_quotes_engagement_idx on insurance_quotes (engagement_id, created_at desc);

alter table insurance_policies add column quote_id text references insurance_quotes (id);
-- the loss the evidence proves (a failed task's price held, a breach's credit); a claim pays at most it
alter table insurance_claims add column loss_fils bigint;
alter table insurance_claims drop constraint insurance_claims_requested_fils_check;
alter table insurance_claims add constraint insurance_claims_requested_fils_check check (requested_fils >= 0);

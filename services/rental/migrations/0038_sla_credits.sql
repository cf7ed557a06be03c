-- SLA credits (areas/sla/credits.ts): each sla.breached recorded in a statement period (a calendar
-- month, UTC) that has ended is credited once: credit_bps_per_breach of the engagement's fees in
-- that period (released escrows), capped so one period's credits never exceed its fees, posted on
-- the rail as a balanced `sla_credit` transfer (payout and platform fees → the client's wallet,
-- key `sla-credit:<event id>`), with its sla.credited event and receipt. The unique keys make a
-- breach credited at most once, whatever the instances and retries.
create table sla_credits (
  id text primary key,
  sla_event_id text not null unique references sla_events (id),
  event_id text not null unique,
  org_id text not null references orgs (id),
  engagement_id text not null references engagements (id),
  term text not null,
  period_from timestamptz not null,
  period_to timestamptz not null,
  fees_fils bigint not null,
  credit_bps integer not null,
  owed_fils bigint not null,
  amount_fils bigint not null,
  transfer_id text,
  receipt_id text not null,
  receipt_leaf_hash text not null,
  credited_event_id text not null,
  created_at timestamptz not null
);
create index sla_credits_engagement_idx on sla_credits (engagement_id, period_from);
create index sla_credits_org_idx on sla_credits (org_id, created_at desc);

-- the credit job looks for breaches of ended periods not credited yet
create index sla_events_breached_idx on sla_events (created_at, id) where type = 'sla.breached';

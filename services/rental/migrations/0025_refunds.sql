-- Refunds: a client's goodwill refund of a released escrow (or part of it). requested → accepted
-- (the provider organization or an operator, possibly for less) → settled (an operator approves:
-- one reversal transfer on the rail, key `refund:<id>`); rejected from requested or accepted.
-- Requested, accepted and settled refunds all count against what is still refundable of the
-- escrow (the escrow row is locked while a refund is asked for), rejected ones do not.
create table refunds (
  id text primary key,
  org_id text not null references orgs (id),
  escrow_id text not null references escrows (id),
  engagement_id text not null,
  task_id text,
  agent_did text not null,
  currency text not null default 'AED',
  requested_fils bigint not null check (requested_fils > 0),
  amount_fils bigint not null check (amount_fils > 0 and amount_fils <= requested_fils),
  state text not null check (state in ('requested', 'accepted', 'settled', 'rejected')),
  reason text not null,
  reject_reason text,
  fee_part_fils bigint,
  transfer_id text,
  receipt_id text,
  requested_by text,
  created_at timestamptz not null,
  updated_at timestamptz not null
);
create index refunds_org_idx on refunds (org_id, created_at desc, id);
create index refunds_escrow_idx on refunds (escrow_id);

-- Asking for refunds (and a provider accepting them): owners, admins and the billing role.
update rental_roles set permissions = permissions || array['refunds:write']
  where name in ('owner', 'admin', 'billing') and not ('refunds:write' = any (permissions));

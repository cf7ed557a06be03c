-- Invoices: issued by the platform to a client organization for its released escrows (a period
-- or an engagement), immutable once issued. Numbers are sequential per issuer without gaps: the
-- issuer's counter row is incremented (`update … returning`) in the invoice's transaction, so a
-- rolled-back creation rolls its number back too, and concurrent creations queue on the row.
create table invoice_counters (
  issuer text not null,
  year integer not null,
  last_number integer not null default 0,
  primary key (issuer, year)
);

create table invoices (
  id text primary key,
  org_id text not null references orgs (id),
  issuer text not null,
  number text not null,
  -- what it covers: a period [period_from, period_to) or one engagement
  engagement_id text references engagements (id),
  period_from timestamptz,
  period_to timestamptz,
  currency text not null default 'AED',
  net_fils bigint not null check (net_fils >= 0),
  vat_fils bigint not null check (vat_fils >= 0),
  gross_fils bigint not null check (gross_fils = net_fils + vat_fils),
  vat_rate_bps integer not null,
  issuer_details jsonb not null,
  client_details jsonb not null,
  issued_at timestamptz not null,
  due_at timestamptz not null,
  state text not null check (state in ('issued', 'paid')),
  paid_reference text,
  paid_at timestamptz,
  paid_by text,
  paid_receipt_id text,
  created_by text,
  unique (issuer, number)
);
create index invoices_org_idx on invoices (org_id, issued_at desc, id);

-- One line per released escrow; an escrow is invoiced once (the unique escrow_id).
create table invoice_lines (
  invoice_id text not null references invoices (id),
  position integer not null,
  escrow_id text not null unique references escrows (id),
  engagement_id text not null,
  task_id text,
  description text not null,
  agent_did text not null,
  net_fils bigint not null check (net_fils >= 0),
  fee_fils bigint not null,
  vat_fils bigint not null check (vat_fils >= 0),
  gross_fils bigint not null,
  released_at timestamptz not null,
  primary key (invoice_id, position)
);

-- Creating invoices and recording payments: owners, admins and the billing role.
update rental_roles set permissions = permissions || array['invoices:write']
  where name in ('owner', 'admin', 'billing') and not ('invoices:write' = any (permissions));

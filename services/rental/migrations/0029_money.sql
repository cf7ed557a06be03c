-- Money, part 2. Refunds keep what their approval signed: the `svc.refund` body (JCS), its
-- sha256 name and the provider key's Ed25519 signature over it, the leaf hash of their
-- `refund.settled` receipt (statements show it) and the credit note the settlement issued.
alter table refunds add column body jsonb;
alter table refunds add column body_hash text;
alter table refunds add column provider_signature text;
alter table refunds add column receipt_leaf_hash text;
alter table refunds add column credit_note_id text;
alter table refunds add column credit_note_number text;
create index refunds_transfer_idx on refunds (transfer_id);

-- Credit notes: the correction a settled refund issues (an invoice is never changed), one per
-- refund (unique refund_id). Numbered `CN-<year>-<6 digits>` in their own gapless sequence per
-- issuer through invoice_counters (issuer `platform-cn`). One line: the refunded escrow, VAT
-- reversed half-up like the invoice's. invoice_id: the invoice that carried the escrow when the
-- note was issued (null when not invoiced yet; the invoice lists its escrows' notes either way).
create table credit_notes (
  id text primary key,
  org_id text not null references orgs (id),
  issuer text not null,
  number text not null,
  refund_id text not null unique references refunds (id),
  invoice_id text references invoices (id),
  escrow_id text not null references escrows (id),
  engagement_id text not null,
  task_id text,
  agent_did text not null,
  description text not null,
  currency text not null default 'AED',
  net_fils bigint not null check (net_fils > 0),
  vat_fils bigint not null check (vat_fils >= 0),
  gross_fils bigint not null check (gross_fils = net_fils + vat_fils),
  vat_rate_bps integer not null,
  issuer_details jsonb not null,
  client_details jsonb not null,
  reason text not null,
  issued_at timestamptz not null,
  unique (issuer, number)
);
create index credit_notes_org_idx on credit_notes (org_id, issued_at desc, id);
create index credit_notes_escrow_idx on credit_notes (escrow_id);

-- Prices are VAT-inclusive: the amount a client signs in an escrow is what it pays, VAT included.
-- A release posts the escrow's VAT share to platform:vat (the VAT payable) and keeps it here;
-- escrows released before keep null (no VAT was posted for them).
alter table escrows add column vat_fils bigint check (vat_fils >= 0);

-- An invoice of VAT-inclusive lines is paid by the releases it lists (its lines' transfers) when it
-- is issued; earlier invoices (VAT on top of the escrow) keep vat_inclusive false.
alter table invoices add column vat_inclusive boolean not null default false;
alter table invoice_lines add column transfer_id text;

-- A credit note of a VAT-inclusive escrow takes the refund's amount off gross (its VAT share
-- inside it), and names the transfer that paid the refund back.
alter table credit_notes add column vat_inclusive boolean not null default false;
alter table credit_notes add column transfer_id text;

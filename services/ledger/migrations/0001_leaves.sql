-- The receipts log: one row per leaf, in the order the sequencer integrated them.
create table leaves (
  leaf_index bigint primary key check (leaf_index >= 0),
  -- RFC 9162 leaf hash: SHA-256(0x00 || canonical receipt bytes); unique, so a receipt is logged once
  leaf_hash bytea not null unique check (octet_length(leaf_hash) = 32),
  receipt jsonb not null,
  issuer_did text not null,
  integrated_at timestamptz not null default now()
);

create index leaves_issuer_idx on leaves (issuer_did, leaf_index);

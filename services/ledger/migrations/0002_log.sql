-- The log proper. 0001's first sketch of `leaves` is replaced before any data: a leaf now keeps
-- the exact bytes that were hashed, and the tree keeps every complete subtree hash (tlog layout).
drop table leaves;

-- One row: how many leaves the tree holds and its root. Its row lock orders every batch.
create table tree_state (
  singleton boolean primary key default true check (singleton),
  size bigint not null check (size >= 0),
  root_hash bytea not null check (octet_length(root_hash) = 32)
);
insert into tree_state (size, root_hash)
values (0, '\xe3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855');

create table leaves (
  leaf_index bigint primary key check (leaf_index >= 0),
  -- RFC 9162: SHA-256(0x00 || entry); unique, so a receipt is in the log once
  leaf_hash bytea not null unique check (octet_length(leaf_hash) = 32),
  -- the JCS bytes of {"receipt", "signature"}: exactly what was hashed
  entry bytea not null,
  receipt_type text not null,
  issuer_did text not null,
  subject text not null,
  issued_at timestamptz not null,
  writer text not null,
  integrated_at timestamptz not null default now()
);
create index leaves_subject_idx on leaves (subject, leaf_index);
create index leaves_issuer_idx on leaves (issuer_did, leaf_index);

-- Every complete subtree: level 0 holds leaf hashes; (level, index) covers leaves [index·2^level, (index+1)·2^level).
create table tree_nodes (
  level smallint not null check (level between 0 and 63),
  node_index bigint not null check (node_index >= 0),
  hash bytea not null check (octet_length(hash) = 32),
  primary key (level, node_index)
);

-- Every signed checkpoint, one per tree size.
create table checkpoints (
  tree_size bigint primary key check (tree_size >= 0),
  root_hash bytea not null check (octet_length(root_hash) = 32),
  note text not null,
  created_at timestamptz not null default now()
);

-- Witness cosignature lines on our checkpoints (C2SP tlog-cosignature).
create table cosignatures (
  tree_size bigint not null references checkpoints (tree_size),
  witness text not null,
  signature_line text not null,
  cosigned_at timestamptz not null,
  received_at timestamptz not null default now(),
  primary key (tree_size, witness)
);

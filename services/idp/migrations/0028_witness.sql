-- The idp as a witness of transparency logs (C2SP tlog-witness): its cosigning key, the latest
-- checkpoint it cosigned per log origin, every cosignature it gave, and the evidence of any split
-- view a log showed it.
alter table issuer_identity add column witness_seed_sealed bytea;

create table witness_logs (
  origin text primary key,
  -- the log's signed-note verifier key: configured, or pinned at first contact in development
  verifier_key text not null,
  tree_size bigint not null default 0,
  root_hash bytea,
  -- the latest cosigned checkpoint: the log's note with this witness's cosignature line
  checkpoint text,
  updated_at timestamptz not null default now()
);

create table witness_cosignatures (
  id bigint generated always as identity primary key,
  origin text not null references witness_logs (origin),
  tree_size bigint not null,
  root_hash bytea not null,
  checkpoint text not null,
  cosigned_at timestamptz not null
);

create index witness_cosignatures_time_idx on witness_cosignatures (cosigned_at, id);

create table witness_evidence (
  id bigint generated always as identity primary key,
  origin text not null,
  -- fork: two checkpoints of one size with different roots, both signed by the log;
  -- inconsistent: a signed checkpoint whose consistency with the cosigned one does not verify
  kind text not null check (kind in ('fork', 'inconsistent')),
  cosigned_checkpoint text not null,
  presented_request text not null,
  observed_at timestamptz not null default now()
);

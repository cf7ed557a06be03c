-- Operating documents: every version of the constitution the idp has published, by the SHA-256
-- of its JCS form; and the issuer's ML-DSA-65 key, bound to its Ed25519 did:key.
create table constitutions (
  hash text primary key,
  document jsonb not null,
  published_at timestamptz not null default now()
);

alter table issuer_identity add column mldsa_seed_sealed bytea;

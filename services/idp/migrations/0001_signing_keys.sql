-- The issuer's signing keys. The private key is stored encrypted (AES-256-GCM under the
-- service's key-encryption key); the public JWK is served in /.well-known/jwks.json until it expires.
create table signing_keys (
  kid text primary key,
  alg text not null check (alg in ('RS256', 'ES256', 'EdDSA')),
  public_jwk jsonb not null,
  private_key_enc bytea not null,
  created_at timestamptz not null default now(),
  -- set when a newer key takes over signing; the key stays published until expires_at
  retired_at timestamptz,
  expires_at timestamptz
);

create index signing_keys_active_idx on signing_keys (alg, created_at desc) where retired_at is null;

-- A new signing key is published before it signs, so verifiers holding a cached JWKS
-- (max-age 300) already know it when the first token signed with it arrives.
alter table signing_keys add column activates_at timestamptz not null default now();

create table clients (
  client_id text primary key,
  client_name text not null,
  client_type text not null check (client_type in ('confidential', 'public')),
  first_party boolean not null,
  subject_type text not null check (subject_type in ('public', 'pairwise')),
  token_endpoint_auth_method text not null
    check (token_endpoint_auth_method in ('client_secret_basic', 'client_secret_post', 'none')),
  redirect_uris text[] not null,
  post_logout_redirect_uris text[] not null,
  allowed_origins text[] not null,
  backchannel_logout_uri text,
  frontchannel_logout_uri text,
  -- SHA-256 of the high-entropy secret: verification only
  client_secret_hash bytea,
  -- the webhook secret signs and checks HMACs, so it is sealed (AES-256-GCM), not hashed
  webhook_secret_sealed bytea not null,
  created_at timestamptz not null default now(),
  updated_at timestamptz not null default now(),
  check ((client_type = 'confidential') = (client_secret_hash is not null))
);

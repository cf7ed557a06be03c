-- Onboarding (business and agent checks) and the files a task hands its agent.
-- idp_org_keys: the rental's own organization at the idp (its svc_org_ key, sealed under the
-- service key), made at the first onboarding call in development when RENTAL_IDP_ORG_KEY is unset.
create table idp_org_keys (
  issuer text primary key,
  organization_id text not null,
  api_key_sealed bytea not null,
  created_at timestamptz not null default now()
);

-- rental_kyb: an organization's business check. awaiting_domain (the domain's owner document is
-- not found or does not verify at the idp) -> pending_review (verified; an operator decides) ->
-- approved | rejected. At most one open check (awaiting_domain or pending_review) per organization.
create table rental_kyb (
  id text primary key,
  org_id text not null references orgs (id),
  state text not null check (state in ('awaiting_domain', 'pending_review', 'approved', 'rejected')),
  domain text not null,
  entity_name text not null,
  jurisdiction text not null,
  registration text not null,
  domain_verified boolean not null default false,
  problems jsonb not null default '[]',
  attestation text,
  owner_document jsonb,
  publish_at text,
  checked_at timestamptz,
  submitted_by text,
  reviewed_by text,
  reviewed_at timestamptz,
  review_reason text,
  receipt_id text,
  created_at timestamptz not null,
  updated_at timestamptz not null
);
create unique index rental_kyb_open_idx on rental_kyb (org_id)
  where state in ('awaiting_domain', 'pending_review');
create index rental_kyb_org_idx on rental_kyb (org_id, created_at desc, id);

-- rental_kya: each screening of an agent an organization asked for, done by the idp
-- (/orgs/agents/screen), with the leaf hash of the idp's kya.screening receipt.
create table rental_kya (
  id text primary key,
  org_id text not null references orgs (id),
  agent_did text not null,
  ok boolean not null,
  hits jsonb not null,
  history_count integer not null,
  history_error text,
  idp_receipt text not null,
  screened_by text,
  created_at timestamptz not null
);
create index rental_kya_org_idx on rental_kya (org_id, created_at desc, id);

-- the engagement's files a task hands its agent (ids of rental_files), null: none
alter table tasks add column file_ids jsonb;

-- reading the onboarding status: every role; submitting checks: owners and admins
update rental_roles set permissions = permissions || array['onboarding:read']
  where not ('onboarding:read' = any (permissions));
update rental_roles set permissions = permissions || array['onboarding:write']
  where name in ('owner', 'admin') and not ('onboarding:write' = any (permissions));

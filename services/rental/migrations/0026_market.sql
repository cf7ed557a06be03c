-- The market: listings a provider organization publishes for one of its agents (the built-in
-- agents are the platform's, org_platform, and operators publish for it). Search is PostgreSQL
-- full-text search over title (weight A), skills (B) and description (C), kept in a generated
-- tsvector column (the 'simple' configuration: no stemming, so Arabic and English behave alike).
create table rental_listings (
  id text primary key,
  org_id text not null references orgs (id),
  agent_did text not null,
  title text not null,
  description text not null,
  skills text[] not null default '{}',
  tags text[] not null default '{}',
  languages text[] not null default '{}',
  price_fils bigint not null check (price_fils > 0 and price_fils <= 9007199254740991),
  package_price_fils bigint check (package_price_fils > 0 and package_price_fils <= 9007199254740991),
  sla jsonb not null default '{}',
  availability text not null default 'available'
    check (availability in ('available', 'limited', 'unavailable')),
  max_concurrency integer check (max_concurrency > 0),
  unavailable_until timestamptz,
  search tsvector not null,
  created_by text,
  created_at timestamptz not null default now(),
  updated_at timestamptz not null default now(),
  check ((availability = 'limited') = (max_concurrency is not null)),
  check (availability = 'unavailable' or unavailable_until is null)
);
create index rental_listings_search_idx on rental_listings using gin (search);
create index rental_listings_org_idx on rental_listings (org_id, created_at, id);
-- one listing per agent and organization: publishing again updates it (listing.updated)
create unique index rental_listings_agent_idx on rental_listings (agent_did, org_id);

-- reading the market: every member; publishing and availability: owners and admins
update rental_roles set permissions = permissions || array['market:read']
  where not ('market:read' = any (permissions));
update rental_roles set permissions = permissions || array['market:write']
  where name in ('owner', 'admin') and not ('market:write' = any (permissions));

-- An engagement's config (approval policy, maximum task price, output TTL, webhook event filter,
-- default language) is versioned: each change is a row holding the whole config after it, the
-- fields changed, and who changed it. No row: the defaults (version 0).
create table engagement_config_versions (
  engagement_id text not null references engagements (id),
  version integer not null check (version > 0),
  org_id text not null,
  config jsonb not null,
  changes jsonb not null,
  actor text not null,
  created_at timestamptz not null default now(),
  primary key (engagement_id, version)
);

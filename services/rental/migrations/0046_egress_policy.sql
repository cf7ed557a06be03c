-- Web-tool and egress policies of an engagement, each kind versioned (the latest version applies).
create table rental_engagement_policies (
  engagement_id text not null,
  kind text not null check (kind in ('web', 'egress')),
  version integer not null check (version > 0),
  org_id text not null references orgs (id),
  policy jsonb not null,
  actor text not null,
  created_at timestamptz not null default now(),
  primary key (engagement_id, kind, version)
);

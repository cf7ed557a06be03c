-- SLA measurements (areas/sla): sla_states holds, per engagement and term, whether the term is in
-- breach now (so a breach is recorded once until it is restored); sla_events lists each breach and
-- restoration with its measurement and evidence (also recorded in the event log as sla.breached /
-- sla.restored, which webhooks deliver).
create table sla_states (
  engagement_id text not null references engagements (id),
  term text not null,
  breached boolean not null,
  since timestamptz not null,
  primary key (engagement_id, term)
);

create table sla_events (
  id text primary key,
  org_id text not null references orgs (id),
  engagement_id text not null references engagements (id),
  type text not null check (type in ('sla.breached', 'sla.restored')),
  term text not null,
  measured double precision,
  target double precision not null,
  measurement jsonb not null,
  event_id text not null,
  created_at timestamptz not null
);
create index sla_events_org_idx on sla_events (org_id, created_at desc, id desc);
create index sla_events_engagement_idx on sla_events (engagement_id, created_at desc);

-- The measurements read an engagement's last ended tasks by their end (tasks area's table; read
-- only through its service).
create index tasks_engagement_end_idx on tasks (engagement_id, completed_at desc, id desc)
  where engagement_id is not null;

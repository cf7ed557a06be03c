-- Trials: a client organization tries a market listing's agent for free: a few tasks (the
-- listing's sla.trial_tasks, default 3) within a window (sla.trial_days, default 7 days); no
-- escrow, no charge. `tasks_used` is counted in the task's own transaction with the trial row
-- locked, so it never passes `tasks_allowed`. The state (active, exhausted, expired, converted)
-- is derived from these columns and the clock. `live`: the one trial per organization and listing
-- that a new one may not overlap (cleared when it converts or when a new trial finds it over).
-- Converting hires as POST /api/engagements does and keeps the engagement's id here.
create table trials (
  id text primary key,
  org_id text not null references orgs (id),
  listing_id text not null references rental_listings (id),
  agent_did text not null,
  client_did text,
  tasks_allowed integer not null check (tasks_allowed > 0),
  tasks_used integer not null default 0 check (tasks_used >= 0 and tasks_used <= tasks_allowed),
  live boolean not null default true,
  ends_at timestamptz not null,
  engagement_id text references engagements (id),
  converted_at timestamptz,
  created_by text,
  created_at timestamptz not null,
  check ((engagement_id is null) = (converted_at is null))
);
create index trials_org_idx on trials (org_id, created_at desc, id desc);
create unique index trials_live_idx on trials (org_id, listing_id) where live;

-- A task belongs to an engagement (paid by its escrow) or to a trial (free): exactly one of them.
alter table tasks alter column engagement_id drop not null;
alter table tasks add column trial_id text references trials (id);
alter table tasks add constraint tasks_engagement_or_trial
  check ((engagement_id is null) <> (trial_id is null));
create index tasks_trial_idx on tasks (trial_id) where trial_id is not null;

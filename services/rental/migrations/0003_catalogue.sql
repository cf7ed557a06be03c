-- The agents that serve jobs, as the agents service lists them (GET {agents_url}/agents).
create table agents (
  id text primary key,
  did text not null unique,
  name text not null,
  description text not null default '',
  card_url text not null,
  endpoint text not null,
  skills jsonb not null default '[]',
  updated_at timestamptz not null default now()
);

-- A job pairs a profile with an outcome, at a price in AED fils (integer minor units).
create table jobs (
  id text primary key,
  title text not null,
  profile text not null,
  outcome text not null,
  description text not null default '',
  price_fils bigint not null check (price_fils >= 0),
  currency text not null default 'AED' check (currency = 'AED'),
  created_at timestamptz not null default now()
);

-- Which agents serve a job, by the agents service's id; an agent not listed yet is not shown.
create table job_agents (
  job_id text not null references jobs (id),
  agent_id text not null,
  primary key (job_id, agent_id)
);

-- The audit record and providers.
--
-- Audit: every S+C call and every mutating A2A call is a `request.answered` event of rental_events
-- (no table of its own); owners and admins read the record (GET /api/audit, `audit:read`).
update rental_roles set permissions = permissions || array['audit:read']
  where name in ('owner', 'admin') and not ('audit:read' = any (permissions));

-- What an organization is: a client (hires agents; every organization made at sign-in), a
-- provider (publishes agents), or the platform itself (its own provider organization).
alter table orgs add column kind text not null default 'client'
  check (kind in ('client', 'provider', 'platform'));

-- The platform's own provider organization: the built-in agents (imported from the agents
-- service) are its. It has no members; operators act for it.
insert into orgs (id, name, kind) values ('org_platform', 'Platform', 'platform')
  on conflict (id) do update set kind = 'platform';

-- Every agent of the catalogue is published by a provider organization.
alter table agents add column provider_org_id text not null default 'org_platform' references orgs (id);
create index agents_provider_idx on agents (provider_org_id);

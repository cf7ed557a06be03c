-- Step-up and erasure.
-- console_sessions.acr / auth_time: what the session's last ID token said (the sign-in's, or a
-- step-up's: GET /api/auth/step-up), so that sensitive routes can ask for a recent second factor.
alter table console_sessions add column acr text;
alter table console_sessions add column auth_time timestamptz;

-- client_erasures: one row per erased organization (POST /api/clients/erase), with the answer
-- kept so that a second call answers the first's result; the organization row stays (money
-- records reference it) with its name pseudonymised.
-- by_session_hash: the eraser's console session (SHA-256 of its cookie id), whose second call
-- answers the first's result.
create table client_erasures (
  org_id text primary key references orgs (id),
  by_session_hash bytea not null,
  answer jsonb not null,
  erased_at timestamptz not null
);
create index client_erasures_session_idx on client_erasures (by_session_hash);
alter table orgs add column erased_at timestamptz;

-- the erasure is the owner's alone
update rental_roles set permissions = permissions || array['clients:erase']
  where name in ('owner') and not ('clients:erase' = any (permissions));

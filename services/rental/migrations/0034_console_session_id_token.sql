-- The ID token the idp gave at a console sign-in, kept with its session so that sign-out can name
-- it to the idp as `id_token_hint` (OpenID Connect RP-Initiated Logout 1.0). It grants nothing at
-- the rental (sessions are the cookie); null for the sessions made before this column.
alter table console_sessions add column id_token text;

-- Protected resources (tool servers, APIs) that tokens may be issued for (RFC 8707), each with
-- its RFC 9728 metadata. Organizations will own theirs; the admin registers the platform's.
create table resources (
  id text primary key,
  identifier text not null unique,
  name text not null,
  scopes text[] not null default '{}',
  mcp boolean not null default false,
  created_at timestamptz not null default now()
);

alter table authorization_codes add column resource text;
alter table refresh_tokens add column resource text;

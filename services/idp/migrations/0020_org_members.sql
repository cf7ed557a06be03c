-- An organization's members: accounts invited by email with a role, joined once they accept.
create table org_members (
  organization_id text not null references organizations (id),
  user_id text not null references users (id),
  role text not null check (role in ('admin', 'member')),
  created_at timestamptz not null default now(),
  primary key (organization_id, user_id)
);
create index org_members_user_idx on org_members (user_id);

-- Invitations: a single-use link (only its SHA-256 kept) for one address, valid seven days.
create table org_invites (
  token_hash bytea primary key check (octet_length(token_hash) = 32),
  organization_id text not null references organizations (id),
  email text not null,
  role text not null check (role in ('admin', 'member')),
  created_at timestamptz not null default now(),
  expires_at timestamptz not null,
  accepted_at timestamptz,
  accepted_by text references users (id)
);

-- The data room: files an organization keeps with an engagement, encrypted at rest.
-- rental_files: one row per file: who owns it, its name and media type, its size and SHA-256 (of
-- the plaintext), and its own data key sealed (AES-256-GCM) under the service key named by
-- key_id. `uploading` while the bytes stream in (a failed upload deletes the row and its chunks);
-- `stored` once complete; `deleted` keeps only the id, hash and size: the sealed key (crypto-
-- shredding), the name and the chunks are gone.
-- rental_file_chunks: the ciphertext, one row per 64 KiB chunk (AES-256-GCM under the file's
-- data key, the tag appended; the nonce and the additional data derive from the file id, the
-- chunk index and whether it is the last one, so chunks cannot be moved, reordered or dropped).
create table rental_files (
  id text primary key,
  org_id text not null references orgs (id),
  engagement_id text not null,
  name text,
  content_type text not null,
  state text not null check (state in ('uploading', 'stored', 'deleted')),
  size_bytes bigint not null default 0,
  sha256 text,
  chunk_count integer not null default 0,
  key_id text,
  sealed_key bytea,
  created_by text,
  created_at timestamptz not null,
  stored_at timestamptz,
  deleted_at timestamptz,
  check (state = 'deleted' or (name is not null and sealed_key is not null and key_id is not null)),
  check (state <> 'deleted' or (name is null and sealed_key is null))
);
create index rental_files_engagement on rental_files (org_id, engagement_id, created_at desc, id desc);
create index rental_files_key on rental_files (key_id) where sealed_key is not null;

create table rental_file_chunks (
  file_id text not null references rental_files (id) on delete cascade,
  idx integer not null check (idx >= 0),
  final boolean not null,
  data bytea not null,
  primary key (file_id, idx)
);

-- files:read lists and downloads, files:write uploads and deletes. Billing sees money only.
update rental_roles set permissions = permissions || array['files:read', 'files:write']
  where name in ('owner', 'admin', 'member') and not ('files:write' = any (permissions));
update rental_roles set permissions = permissions || array['files:read']
  where name = 'viewer' and not ('files:read' = any (permissions));

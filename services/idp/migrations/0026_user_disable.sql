-- The admin can disable an account (RISC account-disabled): it cannot sign in, and its sessions
-- and tokens stop, until it is enabled again.
alter table users add column disabled_at timestamptz;

-- An organization may ask to be erased when the idp deletes its last owner (user.deleted): the
-- retention policy's erase_on_owner_deletion, off unless the organization sets it.
alter table retention_policies add column erase_on_owner_deletion boolean not null default false;

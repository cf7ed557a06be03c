-- Business verification: what the organization declared of itself, attested by the idp and
-- checked against the owner document its domain publishes.
alter table organizations add column business jsonb;

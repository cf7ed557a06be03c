-- A client is an agent with its own did:key (its key sealed to it), an operator's declaration of
-- the model behind it, and optionally a workload identity (SPIFFE or Entra) it proved it runs as.
alter table clients add column did text;
alter table clients add column key_sealed bytea;
alter table clients add column agent_model jsonb;
alter table clients add column workload jsonb;
create unique index clients_did_idx on clients (did);

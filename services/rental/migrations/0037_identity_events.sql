-- Identity events (the idp's lifecycle webhooks, POST /webhooks/svc-id):
-- idp_clients.webhook_secret_sealed: the console client's webhook secret at the idp (sealed under
-- the service key), which signs the events; idp_lifecycle_events: each event body received (its
-- SHA-256), so that a replay of the same body is answered without acting again.
alter table idp_clients add column webhook_secret_sealed bytea;
alter table idp_clients add column lifecycle_webhook_url text;

create table idp_lifecycle_events (
  body_hash bytea primary key,
  event text not null,
  subject text not null,
  occurred_at timestamptz not null,
  received_at timestamptz not null default now()
);

alter table org_members add column locale text check (locale in ('en', 'ar'));

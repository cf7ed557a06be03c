-- Device authorization (RFC 8628): only the SHA-256 of the device code is kept; the user code is
-- kept normalised (eight letters, no dash), unique so that a lookup finds one request. A code
-- waits `pending` until the user approves (the grant's session is recorded) or denies it, and an
-- approved code gives tokens once (consumed_at). Polling faster than interval_s is answered
-- slow_down, and the interval grows by 5 s each time (RFC 8628 §3.5).
create table device_codes (
  device_code_hash bytea primary key check (octet_length(device_code_hash) = 32),
  user_code text not null unique,
  client_id text not null references clients (client_id),
  scope text[] not null,
  resource text,
  status text not null default 'pending' check (status in ('pending', 'approved', 'denied')),
  interval_s integer not null,
  last_polled_at timestamptz,
  created_at timestamptz not null default now(),
  expires_at timestamptz not null,
  user_id text references users (id),
  sid text,
  auth_time timestamptz,
  acr text,
  amr text[],
  consumed_at timestamptz
);

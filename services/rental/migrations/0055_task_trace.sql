-- The trace a task was created in (OpenTelemetry, W3C trace id: 32 hex digits), answered as the
-- task's `trace_id` so its page can link to it; null when tracing was off.
alter table tasks add column trace_id text;

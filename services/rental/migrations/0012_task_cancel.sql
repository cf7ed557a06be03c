-- A client may cancel a task that has not ended (A2A CancelTask): canceled is a final state, and
-- an agent's answer arriving after it is dropped (no receipt, nothing to release).
alter table tasks drop constraint tasks_state_check;
alter table tasks
  add constraint tasks_state_check check (state in ('submitted', 'working', 'completed', 'failed', 'canceled'));

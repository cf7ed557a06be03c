-- Ending an engagement (areas/ending): the engagement's `ended` state with when and how it ended (the
-- answer of POST /api/engagements/{id}/end), and the escrows it settled: `returned` (opened, never
-- paid out: its money went back to the client's wallet) or `withdrawn` (offered, never opened).
alter table engagements drop constraint engagements_state_check;
alter table engagements add constraint engagements_state_check check (state in ('pending', 'active', 'ended'));
alter table engagements add column ended_at timestamptz;
alter table engagements add column end_answer jsonb;

alter table escrows drop constraint escrows_state_check;
alter table escrows
  add constraint escrows_state_check check (state in ('offered', 'open', 'released', 'returned', 'withdrawn'));
alter table escrows add column return_transfer_id text;
alter table escrows add column returned_at timestamptz;

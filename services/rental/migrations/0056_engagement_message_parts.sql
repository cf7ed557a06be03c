-- What other areas add to the A2A message of an engagement's tasks, kept with the engagement so a
-- task's run reads it with the engagement's terms instead of asking each area (issue 34): each
-- area sets or removes its own part in the transaction that changes what it adds. 'connection':
-- the engagement has a tool server bound (areas/connect); 'web_policy': it has a web-tool policy
-- (areas/egress). A team's engagement needs no part: its SLA body names the team.
alter table engagements add column message_parts text[] not null default '{}';

update engagements e
  set message_parts = array_remove(array[
    case when exists (select 1 from connections c where c.engagement_id = e.id) then 'connection' end,
    case when exists (select 1 from rental_engagement_policies p where p.engagement_id = e.id and p.kind = 'web')
      then 'web_policy' end
  ], null)
  where exists (select 1 from connections c where c.engagement_id = e.id)
     or exists (select 1 from rental_engagement_policies p where p.engagement_id = e.id and p.kind = 'web');

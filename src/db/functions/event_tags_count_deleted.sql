-- tag_active_event_counts: subtracts the ACTIVE events of the links a DELETE on event_tags removed.
create or replace function event_tags_count_deleted() returns trigger
language plpgsql as $$
begin
  update tag_active_event_counts c set active_events = c.active_events - d.n
  from (select r.tag_id, count(*) as n from removed r join events e on e.id = r.event_id where e.status = 'ACTIVE' group by r.tag_id) d
  where c.tag_id = d.tag_id;
  return null;
end
$$;

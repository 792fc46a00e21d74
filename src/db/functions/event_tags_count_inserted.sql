-- tag_active_event_counts (ACTIVE events per tag): adds the ACTIVE events of the links an INSERT on event_tags added.
create or replace function event_tags_count_inserted() returns trigger
language plpgsql as $$
begin
  insert into tag_active_event_counts (tag_id, active_events)
  select a.tag_id, count(*) from added a join events e on e.id = a.event_id where e.status = 'ACTIVE' group by a.tag_id
  on conflict (tag_id) do update set active_events = tag_active_event_counts.active_events + excluded.active_events;
  return null;
end
$$;

-- tag_active_event_counts: an event's tags count it, or stop counting it, when its status moves into or out of ACTIVE (row trigger on events, only on such a change).
create or replace function events_count_status_changed() returns trigger
language plpgsql as $$
begin
  insert into tag_active_event_counts (tag_id, active_events)
  select et.tag_id, case when new.status = 'ACTIVE' then 1 else -1 end from event_tags et where et.event_id = new.id
  on conflict (tag_id) do update set active_events = tag_active_event_counts.active_events + excluded.active_events;
  return null;
end
$$;

-- tag_active_event_counts: an ACTIVE event being deleted stops counting for its tags (BEFORE DELETE, before the cascade removes its links).
create or replace function events_count_deleted() returns trigger
language plpgsql as $$
begin
  update tag_active_event_counts c set active_events = c.active_events - 1
  from event_tags et where et.event_id = old.id and c.tag_id = et.tag_id;
  return old;
end
$$;

-- tag_active_event_counts: emptied when event_tags is truncated.
create or replace function event_tags_count_truncated() returns trigger
language plpgsql as $$
begin
  update tag_active_event_counts set active_events = 0 where active_events <> 0;
  return null;
end
$$;

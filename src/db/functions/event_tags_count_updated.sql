-- tag_active_event_counts: moves the counts of links an UPDATE of event_tags changed.
create or replace function event_tags_count_updated() returns trigger
language plpgsql as $$
begin
  insert into tag_active_event_counts (tag_id, active_events)
  select x.tag_id, sum(x.n) from (
    select a.tag_id, 1 as n from added a join events e on e.id = a.event_id where e.status = 'ACTIVE'
    union all
    select r.tag_id, -1 from removed r join events e on e.id = r.event_id where e.status = 'ACTIVE'
  ) x group by x.tag_id
  on conflict (tag_id) do update set active_events = tag_active_event_counts.active_events + excluded.active_events;
  return null;
end
$$;

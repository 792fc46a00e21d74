-- Carries an event's new search_text to its markets (AFTER trigger: they recompute theirs).
create or replace function events_search_text_changed() returns trigger
language plpgsql as $$
begin
  update markets set search_text = '' where event_id = new.id;
  return null;
end
$$;

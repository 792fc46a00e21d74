-- Carries a series' new search_text to its events (AFTER trigger: they recompute theirs, and pass it to their markets).
create or replace function series_search_text_changed() returns trigger
language plpgsql as $$
begin
  update events set search_text = '' where series_id = new.id;
  return null;
end
$$;

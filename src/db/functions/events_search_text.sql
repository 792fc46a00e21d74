-- events.search_text, kept by a BEFORE trigger whatever writes the row: the words of title, ticker, slug, then its series' text.
create or replace function events_search_text() returns trigger
language plpgsql as $$
begin
  new.search_text := dots_search_fields(array[new.title, new.ticker, new.slug], (select s.search_text from series s where s.id = new.series_id));
  return new;
end
$$;

-- markets.search_text, kept by a BEFORE trigger whatever writes the row: the words of title, ticker, then its event's text.
create or replace function markets_search_text() returns trigger
language plpgsql as $$
begin
  new.search_text := dots_search_fields(array[new.title, new.ticker], (select e.search_text from events e where e.id = new.event_id));
  return new;
end
$$;

-- series.search_text, kept by a BEFORE trigger whatever writes the row: the words of title, ticker, slug.
create or replace function series_search_text() returns trigger
language plpgsql as $$
begin
  new.search_text := dots_search_fields(array[new.title, new.ticker, new.slug], null);
  return new;
end
$$;

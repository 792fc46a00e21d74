-- tags.search_text, kept by a BEFORE trigger whatever writes the row: the words of label, slug.
create or replace function tags_search_text() returns trigger
language plpgsql as $$
begin
  new.search_text := dots_search_fields(array[new.label, new.slug], null);
  return new;
end
$$;

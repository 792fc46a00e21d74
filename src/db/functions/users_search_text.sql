-- users.search_text, kept by a BEFORE trigger whatever writes the row: the words of username, name.
create or replace function users_search_text() returns trigger
language plpgsql as $$
begin
  new.search_text := dots_search_fields(array[new.username, new.name], null);
  return new;
end
$$;

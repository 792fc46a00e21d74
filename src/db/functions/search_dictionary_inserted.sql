-- search_dictionary: adds the words of the search_text of rows an INSERT added (statement-level trigger).
create or replace function search_dictionary_inserted() returns trigger
language plpgsql as $$
begin
  insert into search_dictionary (word)
  select distinct w from added, unnest(string_to_array(added.search_text, ' ')) w where w <> '|'
  order by w
  on conflict do nothing;
  return null;
end
$$;

-- search_dictionary: adds the words of a row's new search_text (row trigger after an UPDATE that changes it).
create or replace function search_dictionary_updated() returns trigger
language plpgsql as $$
begin
  insert into search_dictionary (word)
  select distinct w from unnest(string_to_array(new.search_text, ' ')) w where w <> '|'
  order by w
  on conflict do nothing;
  return null;
end
$$;

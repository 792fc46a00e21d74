-- A searchable text: the words of each field (dots_search_words), fields separated by ` | `, then the parent's text.
create or replace function dots_search_fields(fields text[], parent text) returns text
language sql immutable parallel safe as $$
select concat_ws(' | ', (select string_agg(w, ' | ' order by i)
          from (select dots_search_words(f) as w, i from unnest(fields) with ordinality u (f, i)) x
         where w <> ''),
nullif(parent, ''))
$$;

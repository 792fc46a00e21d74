-- The words of a text: lower-cased by the database's lower(), every run of characters that are not letters or digits
-- (emoji and the other pictographs of U+1F000-U+1FFFF, tag characters and variation selectors included) turned
-- into one space, trimmed. Documents and queries are split by this one function, whatever the locale.
create or replace function dots_search_words(text) returns text
language sql immutable parallel safe strict as $$ select btrim(regexp_replace(lower($1), '[^0-9a-z\u00c0-\u1fff\u2c00-\u2dff\u3040-\ud7ff\uf900-\ufdff\ufe70-\ufeff\uff10-\uff19\uff21-\uff3a\uff41-\uff5a\uff66-\uffdc\U00010000-\U0001efff\U00020000-\U000dffff\U000e1000-\U0010ffff]+', ' ', 'g')) $$;

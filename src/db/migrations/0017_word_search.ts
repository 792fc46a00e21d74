import type { Knex } from 'knex';

/**
 * Word search (`/api/search`, `/public-search`): each searchable item keeps its searchable text as words,
 * and a dictionary of those words serves typo matching.
 *
 * - `dots_search_words(text)`: the text lower-cased by the database's `lower()`, every run of characters that
 *   are not letters or digits (ASCII punctuation and symbols such as `#`, `-`, `.`, and the Unicode punctuation
 *   blocks) turned into one space, trimmed. Queries are split into words by the same function, so documents
 *   and queries agree whatever the database's locale.
 * - `search_text` on series, events, markets, tags and users: the words of each field of the item's searchable
 *   text, fields separated by ` | ` (so that "words in order" never runs from one field into the next). Kept by
 *   BEFORE triggers, whatever writes the row; writing the column itself recomputes it. A series: title, ticker,
 *   slug; an event: title, ticker, slug, then its series' text; a market: title, ticker, then its event's text; a
 *   tag: label, slug; an account: username, name. A series' change is carried to its events and theirs to their
 *   markets by AFTER triggers.
 * - `search_vector`: the distinct words as a tsvector (`array_to_tsvector`, no parser or dictionary between the
 *   words and the lexemes), generated from `search_text`, with a GIN index: a query's words, whole or as
 *   prefixes, are an index lookup however large the catalogue. An ACTIVE event or market also holds the lexeme
 *   ACTIVE_LEXEME (no word can hold `|`), so that the searches read active matches first from the same index.
 * - `search_dictionary`: every word any item's text has held (added by triggers, never removed: a word no item
 *   holds any more only adds an alternative that finds nothing), in byte order (`collate "C"`): the words a
 *   query word is a prefix of, read as a range of its primary key; and with a trigram GiST index: the words
 *   nearest a misspelt query word, read by distance.
 * - `fuzzystrmatch`, for the edit distance between a query word and those nearest words.
 */
const WORD_CHARACTERS = [
  '0-9a-z',
  '\\u00c0-\\u1fff',
  '\\u2c00-\\u2dff',
  '\\u3040-\\ud7ff',
  '\\uf900-\\ufdff',
  '\\ufe70-\\ufeff',
  '\\uff10-\\uff19\\uff21-\\uff3a\\uff41-\\uff5a\\uff66-\\uffdc',
  '\\U00010000-\\U0010ffff',
].join('');

const TABLES = ['series', 'events', 'markets', 'tags', 'users'] as const;

/** The lexeme of an active item (src/db/repositories/word-search.ts reads it). */
export const ACTIVE_LEXEME = '|active';

/** Lexemes beyond the words: the tables with a status mark their ACTIVE rows. */
const MARKS: Record<(typeof TABLES)[number], string> = {
  series: '',
  events: ` || case when status = 'ACTIVE' then array['${ACTIVE_LEXEME}'] else array[]::text[] end`,
  markets: ` || case when status = 'ACTIVE' then array['${ACTIVE_LEXEME}'] else array[]::text[] end`,
  tags: '',
  users: '',
};

/** Each table's searchable fields (of the row `new`), and its parent's text appended after them. */
const FIELDS: Record<(typeof TABLES)[number], string> = {
  series: `array[new.title, new.ticker, new.slug], null`,
  events: `array[new.title, new.ticker, new.slug], (select s.search_text from series s where s.id = new.series_id)`,
  markets: `array[new.title, new.ticker], (select e.search_text from events e where e.id = new.event_id)`,
  tags: `array[new.label, new.slug], null`,
  users: `array[new.username, new.name], null`,
};

/** The columns whose change recomputes the text (`search_text` itself: a child asked to recompute by its parent). */
const SOURCES: Record<(typeof TABLES)[number], string> = {
  series: 'title, ticker, slug, search_text',
  events: 'title, ticker, slug, series_id, search_text',
  markets: 'title, ticker, event_id, search_text',
  tags: 'label, slug, search_text',
  users: 'username, name, search_text',
};

/** Words of a text (its field separators left out). */
const DICTIONARY_WORD = `w <> '|'`;

export async function up(knex: Knex): Promise<void> {
  await knex.raw('create extension if not exists pg_trgm');
  await knex.raw('create extension if not exists fuzzystrmatch');
  await knex.raw(`
    create function dots_search_words(text) returns text language sql immutable parallel safe strict
      as $$ select btrim(regexp_replace(lower($1), '[^${WORD_CHARACTERS}]+', ' ', 'g')) $$`);
  await knex.raw(`
    create function dots_search_fields(fields text[], parent text) returns text language sql immutable parallel safe
      as $$ select concat_ws(' | ', (select string_agg(w, ' | ' order by i)
                                       from (select dots_search_words(f) as w, i from unnest(fields) with ordinality u (f, i)) x
                                      where w <> ''),
                             nullif(parent, '')) $$`);
  await knex.raw(`create table search_dictionary (word text collate "C" primary key)`);
  await knex.raw(`create index search_dictionary_trgm on search_dictionary using gist (word gist_trgm_ops)`);

  for (const table of TABLES) {
    await knex.raw(`alter table ${table} add column search_text text not null default ''`);
    await knex.raw(`
      create function ${table}_search_text() returns trigger language plpgsql as $$
      begin
        new.search_text := dots_search_fields(${FIELDS[table]});
        return new;
      end $$`);
    await knex.raw(`create trigger ${table}_search_text before insert or update of ${SOURCES[table]} on ${table}
      for each row execute function ${table}_search_text()`);
    // In order: a child's text copies its parent's.
    await knex.raw(`update ${table} set search_text = ''`);
    await knex.raw(`alter table ${table} add column search_vector tsvector
      generated always as (array_to_tsvector(array_remove(string_to_array(search_text, ' '), '|')${MARKS[table]})) stored`);
    await knex.raw(`create index ${table}_search_vector on ${table} using gin (search_vector)`);
    await knex.raw(`insert into search_dictionary (word)
      select distinct w from ${table}, unnest(string_to_array(search_text, ' ')) w where ${DICTIONARY_WORD}
      on conflict do nothing`);
  }

  await knex.raw(`
    create function search_dictionary_inserted() returns trigger language plpgsql as $$
    begin
      insert into search_dictionary (word)
      select distinct w from added, unnest(string_to_array(added.search_text, ' ')) w where ${DICTIONARY_WORD}
      order by w
      on conflict do nothing;
      return null;
    end $$`);
  await knex.raw(`
    create function search_dictionary_updated() returns trigger language plpgsql as $$
    begin
      insert into search_dictionary (word)
      select distinct w from unnest(string_to_array(new.search_text, ' ')) w where ${DICTIONARY_WORD}
      order by w
      on conflict do nothing;
      return null;
    end $$`);
  for (const table of TABLES) {
    await knex.raw(`create trigger ${table}_search_dictionary_inserted after insert on ${table} referencing new table as added
      for each statement execute function search_dictionary_inserted()`);
    await knex.raw(`create trigger ${table}_search_dictionary_updated after update on ${table}
      for each row when (old.search_text is distinct from new.search_text) execute function search_dictionary_updated()`);
  }

  await knex.raw(`
    create function series_search_text_changed() returns trigger language plpgsql as $$
    begin
      update events set search_text = '' where series_id = new.id;
      return null;
    end $$`);
  await knex.raw(`
    create function events_search_text_changed() returns trigger language plpgsql as $$
    begin
      update markets set search_text = '' where event_id = new.id;
      return null;
    end $$`);
  await knex.raw(`create trigger series_search_text_changed after update on series
    for each row when (old.search_text is distinct from new.search_text) execute function series_search_text_changed()`);
  await knex.raw(`create trigger events_search_text_changed after update on events
    for each row when (old.search_text is distinct from new.search_text) execute function events_search_text_changed()`);
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw('drop trigger if exists events_search_text_changed on events');
  await knex.raw('drop trigger if exists series_search_text_changed on series');
  await knex.raw('drop function if exists events_search_text_changed()');
  await knex.raw('drop function if exists series_search_text_changed()');
  for (const table of [...TABLES].reverse()) {
    await knex.raw(`drop trigger if exists ${table}_search_dictionary_updated on ${table}`);
    await knex.raw(`drop trigger if exists ${table}_search_dictionary_inserted on ${table}`);
    await knex.raw(`drop trigger if exists ${table}_search_text on ${table}`);
    await knex.raw(`drop function if exists ${table}_search_text()`);
    await knex.raw(`alter table ${table} drop column if exists search_vector`);
    await knex.raw(`alter table ${table} drop column if exists search_text`);
  }
  await knex.raw('drop function if exists search_dictionary_updated()');
  await knex.raw('drop function if exists search_dictionary_inserted()');
  await knex.raw('drop table if exists search_dictionary');
  await knex.raw('drop function if exists dots_search_fields(text[], text)');
  await knex.raw('drop function if exists dots_search_words(text)');
}

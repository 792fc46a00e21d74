import type { Knex } from 'knex';
import { sqlFunctions } from '../sql-functions.js';
import { ACTIVE_LEXEME } from './0017_word_search.js';

/**
 * The catalogue search moves to an index each process holds in memory (src/db/repositories/search-index.ts
 * reads it): `search_changes` logs, in the writing transaction, every change of a searchable item, so that a
 * process learns exactly which items changed since its last read, whatever wrote them.
 *
 * - `search_changes (xid, at, kind, id)`: one row per item written (an item written twice, twice): the
 *   writing transaction's id (xid8, compared with the readers' snapshots), when it wrote (for pruning by age),
 *   the item's kind and id. Filled by row-level AFTER triggers calling `search_item_changed(kind, id column)`
 *   (src/db/functions/search_item_changed.sql) on insert and delete, and on updates of the columns the index
 *   holds only, when one of them changed: trading's updates of markets' and events' figures log nothing. A
 *   series' or event's new text, carried to its events and markets by the `*_search_text_changed` triggers,
 *   logs those too (their `search_text` changes). `event_tags` logs its event.
 * - The SQL word search is gone: the `search_vector` columns with their GIN indexes, and `search_dictionary`
 *   with its triggers and functions, are dropped. `search_text` (its BEFORE triggers and the triggers that
 *   carry it to children), `dots_search_words` and `dots_search_fields` stay: the index reads them.
 */

/** Each table's kind of item, the column holding the item's id, and the columns whose update logs it. */
const LOGGED = [
  { table: 'series', kind: 'series', id: 'id', columns: ['title', 'ticker', 'slug', 'frequency', 'search_text'] },
  { table: 'events', kind: 'event', id: 'id', columns: ['title', 'ticker', 'slug', 'status', 'series_id', 'search_text'] },
  { table: 'markets', kind: 'market', id: 'id', columns: ['title', 'ticker', 'status', 'event_id', 'search_text'] },
  { table: 'tags', kind: 'tag', id: 'id', columns: ['label', 'slug', 'search_text'] },
  { table: 'users', kind: 'profile', id: 'id', columns: ['username', 'name', 'search_text'] },
  { table: 'event_tags', kind: 'event', id: 'event_id', columns: ['event_id', 'tag_id'] },
] as const;

/** The tables of migration 0017's word search. */
const WORD_SEARCH_TABLES = ['series', 'events', 'markets', 'tags', 'users'] as const;
const DICTIONARY_FUNCTIONS = ['search_dictionary_inserted', 'search_dictionary_updated'] as const;

export async function up(knex: Knex): Promise<void> {
  await knex.raw(`
    create table search_changes (
      xid xid8 not null default pg_current_xact_id(),
      at timestamptz not null default now(),
      kind text not null check (kind in ('series', 'event', 'market', 'tag', 'profile')),
      id text not null
    )`);
  await knex.raw('create index search_changes_xid on search_changes (xid)');

  // The function exists before its triggers, as its file has it (and is re-created from the file after the
  // migrations whenever the file changes): a stub until then would let a change committed meanwhile go unlogged.
  // (A stub only if a later migration has dropped the function and its file: that one drops these triggers too.)
  const changed = sqlFunctions().find((f) => f.name === 'search_item_changed');
  await knex.raw(changed ? changed.sql : `create function search_item_changed() returns trigger language plpgsql as $$ begin return null; end $$`);
  for (const { table, kind, id, columns } of LOGGED) {
    const args = `'${kind}', '${id}'`;
    await knex.raw(`create trigger ${table}_search_changes after insert or delete on ${table}
      for each row execute function search_item_changed(${args})`);
    await knex.raw(`create trigger ${table}_search_changes_updated after update of ${columns.join(', ')} on ${table}
      for each row when (row(${columns.map((c) => `old.${c}`).join(', ')}) is distinct from row(${columns.map((c) => `new.${c}`).join(', ')}))
      execute function search_item_changed(${args})`);
  }

  for (const table of WORD_SEARCH_TABLES) {
    await knex.raw(`drop trigger ${table}_search_dictionary_inserted on ${table}`);
    await knex.raw(`drop trigger ${table}_search_dictionary_updated on ${table}`);
    await knex.raw(`drop index ${table}_search_vector`);
    await knex.raw(`alter table ${table} drop column search_vector`);
  }
  for (const name of DICTIONARY_FUNCTIONS) await knex.raw(`drop function ${name}()`);
  await knex.raw('drop table search_dictionary');
  // Their files are gone too: nothing re-creates them.
  await knex('db_functions').whereIn('name', DICTIONARY_FUNCTIONS).delete();
}

/**
 * Back to the word search of migration 0017. Its up() cannot run again over what stayed (search_text, its
 * triggers and functions), so the parts this migration dropped are made again here as 0017 made them.
 */
export async function down(knex: Knex): Promise<void> {
  for (const { table } of [...LOGGED].reverse()) {
    await knex.raw(`drop trigger if exists ${table}_search_changes_updated on ${table}`);
    await knex.raw(`drop trigger if exists ${table}_search_changes on ${table}`);
  }
  await knex.raw('drop function if exists search_item_changed()');
  await knex('db_functions').where({ name: 'search_item_changed' }).delete();
  await knex.raw('drop table if exists search_changes');

  const activeMark = ` || case when status = 'ACTIVE' then array['${ACTIVE_LEXEME}'] else array[]::text[] end`;
  const marks: Record<(typeof WORD_SEARCH_TABLES)[number], string> = { series: '', events: activeMark, markets: activeMark, tags: '', users: '' };
  await knex.raw(`create table search_dictionary (word text collate "C" primary key)`);
  await knex.raw(`create index search_dictionary_trgm on search_dictionary using gist (word gist_trgm_ops)`);
  for (const table of WORD_SEARCH_TABLES) {
    await knex.raw(`alter table ${table} add column search_vector tsvector
      generated always as (array_to_tsvector(array_remove(string_to_array(search_text, ' '), '|')${marks[table]})) stored`);
    await knex.raw(`create index ${table}_search_vector on ${table} using gin (search_vector)`);
    await knex.raw(`insert into search_dictionary (word)
      select distinct w from ${table}, unnest(string_to_array(search_text, ' ')) w where w <> '|'
      on conflict do nothing`);
  }
  await knex.raw(`
    create function search_dictionary_inserted() returns trigger language plpgsql as $$
    begin
      insert into search_dictionary (word)
      select distinct w from added, unnest(string_to_array(added.search_text, ' ')) w where w <> '|'
      order by w
      on conflict do nothing;
      return null;
    end $$`);
  await knex.raw(`
    create function search_dictionary_updated() returns trigger language plpgsql as $$
    begin
      insert into search_dictionary (word)
      select distinct w from unnest(string_to_array(new.search_text, ' ')) w where w <> '|'
      order by w
      on conflict do nothing;
      return null;
    end $$`);
  for (const table of WORD_SEARCH_TABLES) {
    await knex.raw(`create trigger ${table}_search_dictionary_inserted after insert on ${table} referencing new table as added
      for each statement execute function search_dictionary_inserted()`);
    await knex.raw(`create trigger ${table}_search_dictionary_updated after update on ${table}
      for each row when (old.search_text is distinct from new.search_text) execute function search_dictionary_updated()`);
  }
}

import type { Knex } from 'knex';
import { sqlFunctions } from '../sql-functions.js';

/**
 * Emoji and the other pictographs (U+1F000-U+1FFFF), tag characters and variation selectors (U+E0000-U+E0FFF)
 * separate words in the searchable text, as other symbols do: `dots_search_words` took every character above
 * U+FFFF for a letter. The new body (its file) is applied here rather than after the migrations, so that the
 * searchable text of the rows whose fields hold such characters is written again with it (their children's
 * too, by the triggers that carry a parent's text to them; each change is logged for the word indexes).
 */
const SYMBOLS = '[\\U0001F000-\\U0001FFFF\\U000E0000-\\U000E0FFF]';

/** The fields each table's searchable text is made of (its parent's text aside). */
const FIELDS = {
  series: ['title', 'ticker', 'slug'],
  events: ['title', 'ticker', 'slug'],
  markets: ['title', 'ticker'],
  tags: ['label', 'slug'],
  users: ['username', 'name'],
} as const;

/** The body this migration replaces, as it was (a migration does not change once it has landed). */
const PREVIOUS_WORDS = `create or replace function dots_search_words(text) returns text
language sql immutable parallel safe strict as $$ select btrim(regexp_replace(lower($1), '[^0-9a-z\\u00c0-\\u1fff\\u2c00-\\u2dff\\u3040-\\ud7ff\\uf900-\\ufdff\\ufe70-\\ufeff\\uff10-\\uff19\\uff21-\\uff3a\\uff41-\\uff5a\\uff66-\\uffdc\\U00010000-\\U0010ffff]+', ' ', 'g')) $$;`;

/** Writes again the searchable text of the rows whose fields hold such characters (series first, then their events, ...). */
async function rewriteSearchText(knex: Knex): Promise<void> {
  for (const [table, fields] of Object.entries(FIELDS)) {
    await knex.raw(`update ${table} set search_text = search_text where concat_ws(' ', ${fields.join(', ')}) ~ '${SYMBOLS}'`);
  }
}

export async function up(knex: Knex): Promise<void> {
  await knex.raw(sqlFunctions().find((f) => f.name === 'dots_search_words')!.sql);
  await rewriteSearchText(knex);
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw(PREVIOUS_WORDS);
  await rewriteSearchText(knex);
}

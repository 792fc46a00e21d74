import type { Knex } from 'knex';
import * as previous from './0013_feed_records_of_many_writes.js';

/**
 * `feed_append_records` returns, besides the notification, when its records were written and their markets'
 * tickers, so that the process that committed them can publish them to its own subscribers without reading
 * them back. A new return type: the old function is dropped here, and created again from its file
 * (src/db/functions/feed_append_records.sql) after the migrations.
 */
export async function up(knex: Knex): Promise<void> {
  await knex.raw('drop function feed_append_records(bigint[], text[], text[])');
}

/** Back to the function as migration 0013 made it. */
export async function down(knex: Knex): Promise<void> {
  await knex.raw('drop function if exists feed_append_records(bigint[], text[], text[])');
  await previous.up(knex);
}

import type { Knex } from 'knex';

/**
 * Drops `feed_append` (migration 0010), which wrote feed records and NOTIFYed inside the transaction. Every
 * transaction that writes feed records now uses feed_append_records (0011, 0013) and has the process that
 * ran it notify once it committed; closing, resolving and order-session expiry, which run inside another
 * service's transaction, included.
 */
export async function up(knex: Knex): Promise<void> {
  // If exists: a database changed by hand may lack it already; nothing of the service calls it.
  await knex.raw('drop function if exists feed_append(bigint[], text[], text[])');
}

/**
 * feed_append again, doing what migration 0010's did: the records written (by feed_append_records, which
 * numbers them the same way) and their notification sent at commit.
 */
export async function down(knex: Knex): Promise<void> {
  await knex.raw(`
    create function feed_append(p_market_ids bigint[], p_events text[], p_accounts text[]) returns void
    language sql as $$ select pg_notify('dots_feed', feed_append_records(p_market_ids, p_events, p_accounts)) $$`);
}

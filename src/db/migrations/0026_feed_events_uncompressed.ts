import type { Knex } from 'knex';

/**
 * Feed records are stored uncompressed (out of line once larger than about 2 KB, as before). PostgreSQL
 * compressed every record above that size with pglz inside the trading transaction, while the markets'
 * locks are held: a record of a placement is about 3 KB, that of a batch cancel of 1,000 orders 600 KB (10 to
 * 20 ms of compression). Records are kept for a short while only (the feed prunes them by age), so the space
 * this costs is small. Existing records keep their storage; new ones are written uncompressed.
 */
export async function up(knex: Knex): Promise<void> {
  await knex.raw('alter table feed_events alter column events set storage external');
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw('alter table feed_events alter column events set storage extended');
}

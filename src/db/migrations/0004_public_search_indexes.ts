import type { Knex } from 'knex';

/**
 * Indexes of `/public-search`, whose every bucket is read in bounded steps (exact, prefix, then trigram
 * candidates) so that a broad query never ranks the whole catalogue:
 * - events by lower-cased title and by ticker in byte order (`collate "C"`), with id: prefix matches read
 *   in title or ticker order and cut at the page size, whatever the database's collation;
 * - accounts by lower-cased username and name, likewise, and trigram indexes on both for "contains" and
 *   similarity matches of the profile bucket.
 */
const INDEXES = [
  ['events_title_c_id', `events ((lower(title) collate "C"), id)`],
  ['events_ticker_c_id', `events ((ticker collate "C"), id)`],
  ['users_username_c', `users ((lower(username) collate "C"))`],
  ['users_name_c_id', `users ((lower(name) collate "C"), id)`],
  ['users_username_trgm', 'users using gin (lower(username) gin_trgm_ops)'],
  ['users_name_trgm', 'users using gin (lower(name) gin_trgm_ops)'],
] as const;

export async function up(knex: Knex): Promise<void> {
  await knex.raw('create extension if not exists pg_trgm');
  for (const [name, on] of INDEXES) await knex.raw(`create index if not exists ${name} on ${on}`);
}

export async function down(knex: Knex): Promise<void> {
  for (const [name] of INDEXES) await knex.raw(`drop index if exists ${name}`);
}

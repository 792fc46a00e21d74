import type { Knex } from 'knex';

/**
 * Event titles and slugs no longer than the service accepts them (catalogue administration: a title of at
 * most 300 characters, a slug of at most 100). `/events/keyset` ordered by title or slug carries the whole
 * value in its cursor, and the cursor's size limit (`after_cursor`, 4,096 characters) holds for these lengths
 * only: a longer title written straight into the database would give a cursor the service then refuses.
 */
const CHECKS: Array<[string, string]> = [
  ['events_title_length', 'char_length(title) <= 300'],
  ['events_slug_length', 'char_length(slug) <= 100'],
];

export async function up(knex: Knex): Promise<void> {
  for (const [name, check] of CHECKS) await knex.raw(`alter table events add constraint ${name} check (${check})`);
}

export async function down(knex: Knex): Promise<void> {
  for (const [name] of CHECKS) await knex.raw(`alter table events drop constraint if exists ${name}`);
}

import type { Knex } from 'knex';

/**
 * `db_functions`: the checksum of each function file (src/db/functions/NAME.sql) as last applied. From here
 * on a function's body lives in its file, and migrateLatest re-creates the function, after the migrations,
 * whenever its file changes (src/db/sql-functions.ts). Bookkeeping, like knex's own tables: backups leave it
 * out, and a restore fills it by migrating.
 */
export async function up(knex: Knex): Promise<void> {
  await knex.raw(`
    create table db_functions (
      name text primary key,
      checksum text not null
    )`);
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw('drop table db_functions');
}

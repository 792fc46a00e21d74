import { createHash } from 'node:crypto';
import { readdirSync, readFileSync } from 'node:fs';
import type pg from 'pg';

/**
 * The SQL functions' current bodies: one file per function, `functions/NAME.sql`, each a single
 * `create or replace function NAME(...)` statement. Migrations create tables, columns, triggers and indexes,
 * and create or drop functions; a function's body is written only in its file, and re-created from it when
 * the file changes (a changed signature or return type needs a migration that drops the old function first).
 *
 * `db_functions` (migration 0020) records the checksum of each file as last applied. After the migrations,
 * under their advisory lock, migrateLatest re-creates, in name order and in one transaction, every function
 * whose file's checksum differs from the recorded one, or that does not exist.
 */

/** Beside this module: src/db/functions under tsx and vitest, dist/db/functions in the build (which copies them). */
const DIRECTORY = new URL('./functions/', import.meta.url);

export interface SqlFunction {
  name: string;
  sql: string;
  checksum: string;
}

export function sqlFunctions(): SqlFunction[] {
  return readdirSync(DIRECTORY)
    .filter((file) => file.endsWith('.sql'))
    .sort()
    .map((file) => {
      const sql = readFileSync(new URL(file, DIRECTORY), 'utf8');
      return { name: file.slice(0, -'.sql'.length), sql, checksum: createHash('sha256').update(sql).digest('hex') };
    });
}

/** Re-creates the functions whose files changed since they were applied (or that are missing); returns their names. */
/** Run on the connection holding the migrations' advisory lock. */
export async function applySqlFunctions(connection: pg.ClientBase): Promise<string[]> {
  const files = sqlFunctions();
  await connection.query('begin');
  try {
    const { rows } = await connection.query<{ name: string; checksum: string }>(
      `select f.name, f.checksum from db_functions f
        where exists (select 1 from pg_proc p where p.proname = f.name and p.pronamespace = current_schema()::regnamespace)`,
    );
    const applied = new Map<string, string>(rows.map((row) => [row.name, row.checksum]));
    const changed = files.filter((f) => applied.get(f.name) !== f.checksum);
    for (const f of changed) {
      await connection.query(f.sql);
      await connection.query(
        `insert into db_functions (name, checksum) values ($1, $2)
         on conflict (name) do update set checksum = excluded.checksum`,
        [f.name, f.checksum],
      );
    }
    await connection.query('commit');
    return changed.map((f) => f.name);
  } catch (error) {
    await connection.query('rollback');
    throw error;
  }
}

import type { Knex } from 'knex';
import { withAdvisoryLock } from './knex.js';
import { migrations } from './migrations/index.js';
import { applySqlFunctions } from './sql-functions.js';

/** Any fixed number: the advisory lock that lets several instances start against one database at once. */
const MIGRATION_LOCK_KEY = 7_300_451_001;

/** The first `count` migrations (all of them by default) as knex's migration source. */
function sourceOf(count = migrations.length): Knex.MigrationSource<string> {
  const chosen = migrations.slice(0, count);
  return {
    getMigrations: () => Promise.resolve(chosen.map((m) => m.name)),
    getMigrationName: (name) => name,
    getMigration: (name) => {
      const found = chosen.find((m) => m.name === name);
      return found ? Promise.resolve(found.migration) : Promise.reject(new Error(`unknown migration ${name}`));
    },
  };
}

/**
 * Brings the schema up to date (or, `upTo`, to its first `upTo` migrations: a restore loads a backup into the
 * schema it was made from), then, once every migration has run, the SQL functions whose files changed
 * (sql-functions.ts). Instances starting together wait for each other on an advisory lock. Returns the
 * migrations applied.
 */
export async function migrateLatest(db: Knex, upTo?: number): Promise<string[]> {
  return withAdvisoryLock(db, MIGRATION_LOCK_KEY, async (connection) => {
    const [, applied] = (await db.migrate.latest({ migrationSource: sourceOf(upTo) })) as [number, string[]];
    if (upTo === undefined || upTo >= migrations.length) await applySqlFunctions(connection);
    return applied;
  });
}

/**
 * Undoes, newest first, every migration applied after `name`, which stays applied (tests use it to prove a
 * `down` restores what its `up` replaced, whatever migrations come later).
 */
export async function rollbackTo(db: Knex, name: string): Promise<void> {
  const config = { migrationSource: sourceOf() };
  for (;;) {
    const [completed] = (await db.migrate.list(config)) as [Array<{ name: string }>, unknown];
    if (!completed.some((migration) => migration.name === name)) throw new Error(`migration ${name} is not applied`);
    if (completed.at(-1)!.name === name) return;
    await db.migrate.down(config);
  }
}

/** Undoes every migration, newest first (tests use it to prove each `down` works). */
export async function rollbackAll(db: Knex): Promise<void> {
  await db.migrate.rollback({ migrationSource: sourceOf() }, true);
}

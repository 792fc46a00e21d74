import type { Queryable } from '../knex.js';

/** Any fixed number: serialises demo seeding between instances starting together. */
const SEED_LOCK_KEY = 7_300_451_002;

export async function isCatalogueEmpty(db: Queryable): Promise<boolean> {
  const row = await db.raw('select not exists (select 1 from series) and not exists (select 1 from tags) as empty');
  return Boolean(row.rows[0]?.empty);
}

/** Runs `work` while holding the seed lock on one connection of the pool. */
export async function withSeedLock<T>(db: import('knex').Knex, work: () => Promise<T>): Promise<T> {
  const connection = await db.client.acquireConnection();
  try {
    await connection.query('select pg_advisory_lock($1)', [SEED_LOCK_KEY]);
    try {
      return await work();
    } finally {
      await connection.query('select pg_advisory_unlock($1)', [SEED_LOCK_KEY]);
    }
  } finally {
    await db.client.releaseConnection(connection);
  }
}

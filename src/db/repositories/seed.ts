import { withAdvisoryLock, type Db, type Queryable } from '../knex.js';

/** Any fixed number: serialises demo seeding between instances starting together. */
const SEED_LOCK_KEY = 7_300_451_002;

export async function isCatalogueEmpty(db: Queryable): Promise<boolean> {
  const row = await db.raw<{ rows: Array<{ empty: boolean }> }>('select not exists (select 1 from series) and not exists (select 1 from tags) as empty');
  return Boolean(row.rows[0]?.empty);
}

/** Runs `work` while holding the seed lock on one connection of the pool. */
export async function withSeedLock<T>(db: Db, work: () => Promise<T>): Promise<T> {
  return withAdvisoryLock(db, SEED_LOCK_KEY, work);
}

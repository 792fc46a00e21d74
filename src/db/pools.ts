import { createDb, type Db } from './knex.js';

/**
 * Connections of each search (`/public-search`, `/api/search`), apart from the main pool: their statements
 * run on generic plans (planned once per connection; src/db/repositories/public-search.ts, search.ts), a
 * setting the other statements must not get, and the native search's with sequential scans off. Each search
 * is a few milliseconds of PostgreSQL CPU, so only a few run at once; the rest wait their turn here instead
 * of time-slicing the database's cores, and a burst of searches (a public, unauthenticated read) never takes
 * the connections trading needs.
 */
export const SEARCH_POOL_MAX = 4;

/** The service's connection pools: the main one and the searches' (SEARCH_POOL_MAX each). */
export interface Pools {
  db: Db;
  /** `/public-search`: generic plans. */
  publicSearchDb: Db;
  /** `/api/search`: generic plans, sequential scans off. */
  catalogueSearchDb: Db;
}

export function createPools(databaseUrl: string): Pools {
  return {
    db: createDb(databaseUrl),
    publicSearchDb: createDb(databaseUrl, SEARCH_POOL_MAX, { genericPlans: true }),
    catalogueSearchDb: createDb(databaseUrl, SEARCH_POOL_MAX, { genericPlans: true, indexScansOnly: true }),
  };
}

export const destroyPools = (pools: Pools) => Promise.all(Object.values(pools).map((pool: Db) => pool.destroy()));

import { createHash } from 'node:crypto';
import { createDb, type Db, type PoolOptions } from './knex.js';

/**
 * Connections of each search (`/public-search`, `/api/search`), apart from the main pool: their statements
 * run on generic plans (planned once per connection; src/db/repositories/public-search.ts, search.ts), a
 * setting the other statements must not get, and sequential scans off. Each search reads its candidates by
 * id (the word index is in memory: src/domain/catalogue/search-index.ts), so a few connections serve many
 * searches; the rest wait their turn here, and a burst of searches (a public, unauthenticated read) never
 * takes the connections trading needs.
 */
export const SEARCH_POOL_MAX = 4;
/** Connections of the main pool, and of the named statements'. */
export const POOL_MAX = 10;

/** The service's connection pools: the main one, that of named statements, and the searches' (SEARCH_POOL_MAX each). */
export interface Pools {
  db: Db;
  /** Named statements of fixed text, each planned once per connection without its values (sequential scans off): see plannedOnce. */
  plannedDb: Db;
  /** `/public-search`: generic plans, sequential scans off. */
  publicSearchDb: Db;
  /** `/api/search`: generic plans, sequential scans off. */
  catalogueSearchDb: Db;
}

const POOLS: { readonly [Pool in keyof Pools]: { max: number; options: PoolOptions } } = {
  db: { max: POOL_MAX, options: {} },
  plannedDb: { max: POOL_MAX, options: { genericPlans: true, indexScansOnly: true } },
  publicSearchDb: { max: SEARCH_POOL_MAX, options: { genericPlans: true, indexScansOnly: true } },
  catalogueSearchDb: { max: SEARCH_POOL_MAX, options: { genericPlans: true, indexScansOnly: true } },
};

export function createPools(databaseUrl: string): Pools {
  const pool = (name: keyof Pools) => createDb(databaseUrl, POOLS[name].max, POOLS[name].options);
  return { db: pool('db'), plannedDb: pool('plannedDb'), publicSearchDb: pool('publicSearchDb'), catalogueSearchDb: pool('catalogueSearchDb') };
}

export const destroyPools = (pools: Pools) => Promise.all(Object.values(pools).map((pool: Db) => pool.destroy()));

/** The pools a catalogue read chooses between (plannedOnce). */
export type ReadPools = Pick<Pools, 'db' | 'plannedDb'>;

const statementNames = new Map<string, string>();

/**
 * Where a read runs. A statement whose plan reads the same indexes whatever its values (a list's default page:
 * its status conditions written into the text, only the page size, offset or cursor bound) runs as a named
 * statement on `plannedDb`, planned once per connection: planning such a page costs PostgreSQL more than
 * reading it. `shape` names everything the statement's text depends on, since a name stands for one text on a
 * connection; undefined: the statement is planned for its values, on `db`. Only shapes the code enumerates
 * are named (orders, directions, status filters: a few hundred at most), which bounds the statements, and
 * their plans, that each connection keeps.
 */
export function plannedOnce(pools: ReadPools, shape: string | undefined): { db: Db; name: string | undefined } {
  if (shape === undefined) return { db: pools.db, name: undefined };
  let name = statementNames.get(shape);
  if (name === undefined) {
    name = `dots_${createHash('sha1').update(shape).digest('hex').slice(0, 24)}`;
    statementNames.set(shape, name);
  }
  return { db: pools.plannedDb, name };
}

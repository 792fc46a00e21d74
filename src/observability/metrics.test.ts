import { describe, expect, it } from 'vitest';
import type { Pools } from '../db/pools.js';
import { ServiceMetrics } from './metrics.js';

/** A stand-in for a Knex instance: only the tarn pool figures the gauges read, different for every pool. */
function pools(): Pools {
  const figures = { db: [10, 3, 2, 4], plannedDb: [10, 0, 1, 0], publicSearchDb: [4, 4, 0, 7], catalogueSearchDb: [4, 1, 3, 0] };
  return Object.fromEntries(
    Object.entries(figures).map(([name, [max, used, free, pending]]) => [
      name,
      { client: { pool: { max, numUsed: () => used, numFree: () => free, numPendingAcquires: () => pending } } },
    ]),
  ) as unknown as Pools;
}

describe('ServiceMetrics.watchPools', () => {
  it("reads each pool's size, connections in use, idle connections and waiting queries at the scrape", async () => {
    const metrics = new ServiceMetrics();
    metrics.watchPools(pools());
    const text = await metrics.registry.metrics();
    const lines = (name: string) => text.split('\n').filter((line) => line.startsWith(`${name}{`));
    expect(lines('dots_db_pool_size')).toEqual([
      'dots_db_pool_size{pool="db"} 10',
      'dots_db_pool_size{pool="plannedDb"} 10',
      'dots_db_pool_size{pool="publicSearchDb"} 4',
      'dots_db_pool_size{pool="catalogueSearchDb"} 4',
    ]);
    expect(lines('dots_db_pool_in_use')).toEqual([
      'dots_db_pool_in_use{pool="db"} 3',
      'dots_db_pool_in_use{pool="plannedDb"} 0',
      'dots_db_pool_in_use{pool="publicSearchDb"} 4',
      'dots_db_pool_in_use{pool="catalogueSearchDb"} 1',
    ]);
    expect(lines('dots_db_pool_idle')).toEqual([
      'dots_db_pool_idle{pool="db"} 2',
      'dots_db_pool_idle{pool="plannedDb"} 1',
      'dots_db_pool_idle{pool="publicSearchDb"} 0',
      'dots_db_pool_idle{pool="catalogueSearchDb"} 3',
    ]);
    expect(lines('dots_db_pool_waiting')).toEqual([
      'dots_db_pool_waiting{pool="db"} 4',
      'dots_db_pool_waiting{pool="plannedDb"} 0',
      'dots_db_pool_waiting{pool="publicSearchDb"} 7',
      'dots_db_pool_waiting{pool="catalogueSearchDb"} 0',
    ]);
  });
});

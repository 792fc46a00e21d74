import { describe, expect, it } from 'vitest';
import type { Pools } from '../db/pools.js';
import { ServiceMetrics } from './metrics.js';

/** What each pool's gauges should show: different figures for every pool and gauge. */
const FIGURES: Record<keyof Pools, { size: number; in_use: number; idle: number; waiting: number }> = {
  db: { size: 10, in_use: 3, idle: 2, waiting: 4 },
  plannedDb: { size: 9, in_use: 0, idle: 1, waiting: 0 },
  publicSearchDb: { size: 4, in_use: 4, idle: 0, waiting: 7 },
  catalogueSearchDb: { size: 5, in_use: 1, idle: 3, waiting: 6 },
};

/** Stand-ins for the Knex instances: only the tarn pool figures the gauges read. */
function pools(): Pools {
  return Object.fromEntries(
    Object.entries(FIGURES).map(([name, f]) => [
      name,
      { client: { pool: { max: f.size, numUsed: () => f.in_use, numFree: () => f.idle, numPendingAcquires: () => f.waiting } } },
    ]),
  ) as unknown as Pools;
}

describe('ServiceMetrics.watchPools', () => {
  it("reads each pool's size, connections in use, idle connections and waiting queries at the scrape", async () => {
    const metrics = new ServiceMetrics();
    metrics.watchPools(pools());
    const text = await metrics.registry.metrics();
    for (const figure of ['size', 'in_use', 'idle', 'waiting'] as const) {
      const name = `dots_db_pool_${figure}`;
      expect(text.split('\n').filter((line) => line.startsWith(`${name}{`))).toEqual(
        Object.entries(FIGURES).map(([pool, figures]) => `${name}{pool="${pool}"} ${figures[figure]}`),
      );
    }
  });
});

import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createDb, type Db } from '../../src/db/knex.js';
import { PERSIST_CHANGES, useTradingPlans } from '../../src/db/repositories/trading.js';
import { createTestDatabase } from '../support/service.js';

/**
 * A trading transaction's named statements are planned once per connection (generic plans) and keep that
 * plan. On a new database, with empty tables, the planner would scan whole tables for them, and keep doing
 * so as the tables grow: the trading plan settings (useTradingPlans) make it use the indexes.
 */

let db: Db;

beforeAll(async () => {
  db = createDb(await createTestDatabase(), 2);
});
afterAll(async () => {
  await db?.destroy();
});

/** The generic plan of the write statement on these empty tables, with or without the trading plan settings. */
async function persistPlan(tradingPlans: boolean): Promise<string> {
  let n = 0;
  const text = PERSIST_CHANGES.replace(/\?/g, () => `$${++n}`);
  return db.transaction(async (tx) => {
    if (tradingPlans) await useTradingPlans(tx);
    const result = await tx.raw<{ rows: Array<{ 'QUERY PLAN': string }> }>(`explain (generic_plan) ${text}`);
    return result.rows.map((row) => row['QUERY PLAN']).join('\n');
  });
}

describe('trading plans', () => {
  it('write every row by key, whatever the size of the tables when planned', async () => {
    const scans = /Seq Scan on (orders|positions|balances|markets)\b/;
    // What the settings are for: left to itself, the planner scans the (empty) tables.
    expect(await persistPlan(false)).toMatch(scans);
    const plan = await persistPlan(true);
    expect(plan).not.toMatch(/Seq Scan/);
    expect(plan).toMatch(/Index Scan using orders_pkey/);
  });
});

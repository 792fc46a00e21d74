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

interface PlanNode {
  'Node Type': string;
  'Relation Name'?: string;
  'Index Name'?: string;
  'Index Cond'?: string;
  Plans?: PlanNode[];
}

/** The generic plan of the write statement on these empty tables, with or without the trading plan settings. */
async function persistPlan(tradingPlans: boolean): Promise<PlanNode> {
  let n = 0;
  // Its parameters are bound by name (`:name::type[]`): numbered here, as knex numbers them.
  const text = PERSIST_CHANGES.replace(/:\w+(?=::)/g, () => `$${++n}`);
  return db.transaction(async (tx) => {
    if (tradingPlans) await useTradingPlans(tx);
    const result = await tx.raw<{ rows: Array<{ 'QUERY PLAN': Array<{ Plan: PlanNode }> }> }>(`explain (generic_plan, format json) ${text}`);
    return result.rows[0]!['QUERY PLAN'][0]!.Plan;
  });
}

const nodesOf = (node: PlanNode): PlanNode[] => [node, ...(node.Plans ?? []).flatMap(nodesOf)];

/**
 * Reads of the tables that grow with trading that are not lookups by key: a whole table, or a whole index (an
 * index scan without an index condition, or a bitmap of one, such as a partial index's every entry).
 */
function wholeReads(plan: PlanNode): string[] {
  const growing = new Set(['orders', 'positions', 'balances', 'markets']);
  const whole = (node: PlanNode): boolean => {
    if (node['Node Type'] === 'Seq Scan') return true;
    if (node['Node Type'] === 'Bitmap Heap Scan') return nodesOf(node).some((n) => n['Node Type'] === 'Bitmap Index Scan' && n['Index Cond'] === undefined);
    return /^Index( Only)? Scan$/.test(node['Node Type']) && node['Index Cond'] === undefined;
  };
  return nodesOf(plan)
    .filter((node) => node['Relation Name'] !== undefined && growing.has(node['Relation Name']) && whole(node))
    .map((node) => `${node['Node Type']} on ${node['Relation Name']}${node['Index Name'] ? ` using ${node['Index Name']}` : ''}`);
}

describe('trading plans', () => {
  it('write every row by key, whatever the size of the tables when planned', async () => {
    // What the settings are for: left to itself, the planner scans the (empty) tables.
    expect(wholeReads(await persistPlan(false))).toContainEqual(expect.stringMatching(/^Seq Scan on (orders|positions|balances|markets)$/));
    const plan = await persistPlan(true);
    // No whole table, and no whole index either (a hash join's inner side read in full by an index, as when
    // only sequential scans are ruled out): every row read by its key.
    expect(wholeReads(plan)).toEqual([]);
    expect(nodesOf(plan).map((node) => node['Node Type'])).not.toContainEqual(expect.stringMatching(/^(Hash|Merge) Join$/));
    expect(nodesOf(plan).map((node) => node['Index Name'])).toContain('orders_pkey');
  });
});

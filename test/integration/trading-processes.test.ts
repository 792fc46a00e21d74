import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createDb, type Db } from '../../src/db/knex.js';
import { checkTradingInvariants } from '../support/invariants.js';
import { MarketFactory } from '../support/markets.js';
import { ProcessCluster, workersThatServed } from '../support/processes.js';
import { createTestDatabase } from '../support/service.js';

/**
 * Trading with real service processes on one database: two processes matching the same markets at once
 * (single and batch placements, batches racing on the same client_order_ids), and a process killed with
 * SIGKILL in the middle of single and batch placements; the same with the two HTTP workers of one
 * service (WEB_CONCURRENCY=2) in place of the two processes. Afterwards the database must hold every
 * order that was answered 201, no order over-filled, every book uncrossed, and not a Dot created or lost.
 */

const ADMIN = { email: 'processes-admin@dots.local', password: 'processes-password' };

/** A deterministic stream of crossing orders: buys and sells of both outcomes around the middle. */
function orderFor(i: number, tickers: string[]): Record<string, string> {
  const sides = ['yes', 'no'] as const;
  const price = (40 + ((i * 7) % 21)).toString();
  return { ticker: tickers[i % tickers.length]!, side: sides[(i >> 1) % 2]!, action: 'buy', price: `0.${price}`, count: String(1 + (i % 5)) };
}

describe.each([
  { workers: 1, label: 'service processes' },
  { workers: 2, label: 'the workers of one service, behind one port' },
])('trading across $label', ({ workers }) => {
  let cluster: ProcessCluster;
  let db: Db;

  beforeAll(async () => {
    cluster = new ProcessCluster(await createTestDatabase(), { ADMIN_EMAIL: ADMIN.email, ADMIN_PASSWORD: ADMIN.password }, workers);
    db = createDb(cluster.databaseUrl, 2);
  });
  afterAll(async () => {
    cluster.killAll();
    await db.destroy();
  });

  it('keeps every book consistent and every Dot accounted for while two processes match the same markets', async () => {
    const [a, b] = [await cluster.start(), await cluster.start()];
    const tickers = await (await MarketFactory.create(a.api, ADMIN, 'PROCS')).newTickers(2);
    const clients = [a.api, b.api];
    const traders = await Promise.all(Array.from({ length: 8 }, (_, i) => clients[i % 2]!.register()));

    // 8 traders x 12 orders, all in flight at once, half through each process; and with them, per trader, one
    // batch of 6 orders through each process, both batches naming the same client_order_ids.
    const batchOf = (t: number) => Array.from({ length: 6 }, (_, j) => ({ ...orderFor(1000 + t * 6 + j, tickers), client_order_id: `twin-${t}-${j}` }));
    const [results, batches] = await Promise.all([
      Promise.all(
        traders.flatMap((trader, t) =>
          Array.from({ length: 12 }, (_, k) => clients[(t + k) % 2]!.post('/api/portfolio/orders', orderFor(t * 12 + k, tickers), { token: trader.token })),
        ),
      ),
      Promise.all(traders.flatMap((trader, t) => clients.map((client) => client.post('/api/portfolio/orders/batched', { orders: batchOf(t) }, { token: trader.token })))),
    ]);
    expect(results.filter((response) => response.status >= 500)).toEqual([]);
    expect(batches.map((response) => response.status)).toEqual(Array(traders.length * 2).fill(201));
    // Each client_order_id was placed by exactly one of the two processes; the other answered 409 in its position.
    for (let t = 0; t < traders.length; t += 1) {
      const [first, second] = [batches[t * 2]!.body.orders, batches[t * 2 + 1]!.body.orders];
      for (let j = 0; j < 6; j += 1) {
        const pair = [first[j], second[j]];
        expect(pair.filter((item) => item.order !== null).length, `twin-${t}-${j}`).toBe(1);
        expect(pair.find((item) => item.order === null).error.status).toBe(409);
      }
    }
    expect(await db('orders').where('client_order_id', 'like', 'twin-%').count({ n: '*' })).toEqual([{ n: String(traders.length * 6) }]);
    const placed = results.filter((response) => response.status === 201);
    expect(placed.length).toBeGreaterThan(80);

    // Something matched, on both markets.
    const trades = await db('trades').select('market_id').count('* as n').groupBy('market_id');
    expect(trades.length).toBe(2);
    await checkTradingInvariants(db);
    if (workers > 1) expect(workersThatServed(a.process.output()).size).toBe(workers);

    expect(await cluster.stop(a.process, b.process)).toEqual([0, 0]);
  }, 120_000);

  it('keeps every order answered 201, with its fills, when the process is killed with SIGKILL mid-placement', async () => {
    const first = await cluster.start();
    const tickers = await (await MarketFactory.create(first.api, ADMIN, 'CRASH')).newTickers(1);
    const traders = await Promise.all(Array.from({ length: 4 }, () => first.api.register()));

    const answered: Array<{ order_id: string; fill_count: string }> = [];
    let sent = 0;
    // Half the traders place one order at a time, half in batches of 5.
    const client = async (t: number) => {
      for (let k = 0; k < 2000; k += 1) {
        // (orders sent)
        sent += t % 2 === 0 ? 1 : 5;
        try {
          if (t % 2 === 0) {
            const response = await first.api.post('/api/portfolio/orders', orderFor(t * 1000 + k, tickers), { token: traders[t]!.token });
            if (response.status === 201) answered.push(response.body.order);
          } else {
            const orders = Array.from({ length: 5 }, (_, j) => orderFor(t * 10_000 + k * 5 + j, tickers));
            const response = await first.api.post('/api/portfolio/orders/batched', { orders }, { token: traders[t]!.token });
            if (response.status === 201) for (const item of response.body.orders) if (item.order) answered.push(item.order);
          }
        } catch {
          return; // the connection died with the process
        }
      }
    };
    const running = traders.map((_, t) => client(t));
    while (answered.length < 60) await new Promise((resolve) => setTimeout(resolve, 5));
    first.process.child.kill('SIGKILL');
    await Promise.all(running);
    expect(sent).toBeGreaterThan(answered.length);

    // Restarted on the same database: every answered order is there, filled at least as far as it was.
    const second = await cluster.start();
    const rows = await db('orders').whereIn('id', answered.map((order) => order.order_id)).select('id', 'filled');
    expect(rows.length).toBe(answered.length);
    const filled = new Map(rows.map((row) => [row.id as string, Number(row.filled)]));
    for (const order of answered) expect(filled.get(order.order_id)).toBeGreaterThanOrEqual(Number(order.fill_count));
    // Each order's fills add up to what the order says it filled.
    const mismatched = await db.raw(`
      select o.id from orders o left join (select order_id, sum(count) as n from fills group by order_id) f on f.order_id = o.id
       where o.filled <> coalesce(f.n, 0)`);
    expect(mismatched.rows).toEqual([]);
    await checkTradingInvariants(db);
    expect(await cluster.stop(second.process)).toEqual([0]);
  }, 120_000);
});

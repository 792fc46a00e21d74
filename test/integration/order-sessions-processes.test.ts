import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createDb, type Db } from '../../src/db/knex.js';
import { checkTradingInvariants } from '../support/invariants.js';
import { MarketFactory } from '../support/markets.js';
import { ProcessCluster } from '../support/processes.js';
import { createTestDatabase, type ApiClient } from '../support/service.js';

/**
 * The heartbeat expiry sweep with two real service processes on one database (or the two HTTP workers of
 * one service), both sweeping every second:
 * each expired session is handled exactly once (its `cancelled_count` is exactly the number of its
 * account's resting orders, each order cancelled and its reserve released once), and accounts without an
 * expired session keep their orders.
 */

const ADMIN = { email: 'sessions-procs-admin@dots.local', password: 'sessions-procs-password' };
const SESSION_ENV = { ORDER_HEARTBEAT_TIMEOUT_SECS: '1', ORDER_HEARTBEAT_SWEEP_INTERVAL_SECS: '1' };

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

describe.each([
  { workers: 1, label: 'service processes' },
  { workers: 2, label: 'the workers of one service, behind one port' },
])('the heartbeat expiry sweep across $label', ({ workers }) => {
  let cluster: ProcessCluster;
  let db: Db;

  beforeAll(async () => {
    cluster = new ProcessCluster(await createTestDatabase(), { ADMIN_EMAIL: ADMIN.email, ADMIN_PASSWORD: ADMIN.password, ...SESSION_ENV }, workers);
    db = createDb(cluster.databaseUrl, 2);
  });
  afterAll(async () => {
    cluster.killAll();
    await db.destroy();
  });

  it('handles each expired session once, with exact cancelled counts, in two processes sweeping the same database', async () => {
    const [a, b] = [await cluster.start(), await cluster.start()];
    const tickers = await (await MarketFactory.create(a.api, ADMIN, 'HBP')).newTickers(3);

    // 24 accounts with sessions, account i resting i + 1 orders (bids that never cross) spread over the
    // markets, placed through both processes; then 4 accounts with resting orders and no session.
    const clients = [a.api, b.api];
    const withSessions = await Promise.all(Array.from({ length: 24 }, (_, i) => clients[i % 2]!.register()));
    const withoutSessions = await Promise.all(Array.from({ length: 4 }, (_, i) => clients[i % 2]!.register()));
    const place = async (api: ApiClient, token: string, count: number, offset: number) => {
      for (let k = 0; k < count; k += 1) {
        const body = { ticker: tickers[(offset + k) % tickers.length], side: 'yes', count: String(1 + (k % 3)), price: `0.${10 + ((offset + k) % 30)}` };
        const response = await api.post('/api/portfolio/orders', body, { token });
        expect(response.status).toBe(201);
      }
    };
    await Promise.all(withSessions.map((account, i) => place(clients[i % 2]!, account.token, i + 1, i)));
    await Promise.all(withoutSessions.map((account, i) => place(clients[i % 2]!, account.token, 3, i)));
    const sessionIds = await Promise.all(
      withSessions.map(async (account, i) => {
        const response = await clients[(i + 1) % 2]!.post(i % 3 === 0 ? '/v1/heartbeats' : '/api/portfolio/heartbeat', {}, { token: account.token });
        expect(response.status).toBe(200);
        return response.body.heartbeat_id as string;
      }),
    );

    // Timeout 1 s, sweep every second in each process: all swept within a few seconds.
    const deadline = Date.now() + 15_000;
    for (;;) {
      const n = Number((await db('order_sessions').whereIn('id', sessionIds).whereNull('cancelled_at').count('* as n'))[0]!.n);
      if (n === 0) break;
      if (Date.now() > deadline) throw new Error(`${n} sessions not swept in time`);
      await sleep(250);
    }

    const sessions = await db('order_sessions').whereIn('id', sessionIds).select('id', 'account_id', 'cancelled_count', 'cancelled_at');
    const userIds = withSessions.map((account) => account.user.id);
    for (const [i, id] of sessionIds.entries()) {
      const session = sessions.find((s) => s.id === id)!;
      expect(session.account_id).toBe(userIds[i]);
      expect(session.cancelled_count, `account ${i}`).toBe(i + 1);
    }
    // Every order of those accounts cancelled by the heartbeat, once: one reserve release each.
    const orders = await db('orders').whereIn('account_id', userIds).select('id', 'status', 'cancel_reason');
    expect(orders).toHaveLength((24 * 25) / 2);
    expect(orders.filter((o) => o.status !== 'CANCELLED' || o.cancel_reason !== 'heartbeat')).toEqual([]);
    const releases = await db('ledger_entries').where({ kind: 'release' }).whereIn('reference', orders.map((o) => o.id)).select('reference').count('* as n').groupBy('reference');
    expect(releases).toHaveLength(orders.length);
    expect(releases.filter((r) => Number(r.n) !== 1)).toEqual([]);
    // The accounts without a session keep theirs.
    const kept = await db('orders').whereIn('account_id', withoutSessions.map((account) => account.user.id)).select('status');
    expect(kept.map((o) => o.status)).toEqual(Array(12).fill('OPEN'));
    await checkTradingInvariants(db);

    // What each process says it expired adds up to exactly the 24 sessions.
    // (Workers log through their service's output: each service counted once.)
    const expiredBy = [...new Set([a.process, b.process])].map((process) =>
      [...process.output().matchAll(/"sessions":(\d+).*"msg":"order sessions expired"/g)].reduce((sum, match) => sum + Number(match[1]), 0),
    );
    expect(expiredBy.reduce((sum, n) => sum + n, 0)).toBe(24);

    expect(await cluster.stop(a.process, b.process)).toEqual([0, 0]);
  }, 120_000);
});

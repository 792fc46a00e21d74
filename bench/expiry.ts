/**
 * npm run bench:expiry: how long after its last heartbeat an account's resting orders are cancelled.
 *
 * The service runs in this process (bench/lib.ts startInProcess) on the bench's database, with a session
 * timeout T (ORDER_HEARTBEAT_TIMEOUT_SECS) of 2 s and a sweep interval S (ORDER_HEARTBEAT_SWEEP_INTERVAL_SECS)
 * of 1 s. Each of 3 rounds, through the HTTP API, a fresh account places 1,000 resting orders over four
 * markets, sends one heartbeat and then none. The database is polled every 20 ms until the account has no
 * live order left: the latency is the time from the last heartbeat (its `last_seen_at`) to that observation,
 * an upper bound of the real one (the session's `cancelled_at`, written in the cancelling transaction, is
 * shown too). Target: T + S + 1 s, every order cancelled; exits non-zero when a round misses it.
 */
import { api, benchDatabase, benchSeries, printTable, register, RUN, runBench, sleep, startInProcess } from './lib.js';

const T = 2;
const S = 1;
const ORDERS = 1000;
const ROUNDS = 3;
const CONCURRENCY = 8;
const POLL_MS = 20;
const MARKETS = 4;
const TARGET_MS = (T + S + 1) * 1000;

runBench('expiry', async (defer) => {
  const database = await benchDatabase('bench-expiry', 'bench_expiry', defer);
  const service = await startInProcess(database.url, defer, { ORDER_HEARTBEAT_TIMEOUT_SECS: String(T), ORDER_HEARTBEAT_SWEEP_INTERVAL_SECS: String(S) });
  const base = service.url;
  const series = await benchSeries(base, `BEX${RUN}`);
  const tickers = await series.markets('', MARKETS, await series.event('E'));

  const round = async (index: number) => {
    const { token, accountId } = await register(base, `bench-expiry-${RUN.toLowerCase()}-${index}@example.com`);
    // Resting buys that never cross: YES bids from 0.01 to 0.40, one contract each (at most 400 Dots reserved).
    let next = 0;
    const placeSome = async () => {
      for (let i = next++; i < ORDERS; i = next++) {
        await api(base, 'POST', '/api/portfolio/orders', { ticker: tickers[i % MARKETS], side: 'yes', count: '1', price: (0.01 + (i % 40) / 100).toFixed(2) }, token);
      }
    };
    await Promise.all(Array.from({ length: CONCURRENCY }, placeSome));
    const live = async () => Number((await service.db('orders').where({ account_id: accountId }).whereIn('status', ['OPEN', 'PARTIAL']).count('* as n'))[0]!.n);
    const resting = await live();
    if (resting !== ORDERS) throw new Error(`expected ${ORDERS} resting orders, found ${resting}`);

    const session = await api<{ heartbeat_id: string; last_seen_at: string; expires_at: string }>(base, 'POST', '/api/portfolio/heartbeat', {}, token);
    const lastHeartbeat = Date.parse(session.last_seen_at);
    do {
      await sleep(POLL_MS);
      if (Date.now() - lastHeartbeat > TARGET_MS * 5) throw new Error('the orders were never cancelled');
    } while ((await live()) > 0);
    const observed = Date.now();
    const row = await service.db('order_sessions').where({ id: session.heartbeat_id }).first<{ cancelled_at: Date; cancelled_count: number }>('cancelled_at', 'cancelled_count');
    const [wrong] = await service.db('orders').where({ account_id: accountId }).whereNot({ cancel_reason: 'heartbeat' }).count('* as n');
    if (Number(wrong!.n) !== 0) throw new Error(`${wrong!.n} orders were not cancelled by the heartbeat expiry`);
    const cancelledAt = row.cancelled_at.getTime();
    return { resting, cancelledCount: row.cancelled_count, expiry: cancelledAt - Date.parse(session.expires_at), heartbeat: cancelledAt - lastHeartbeat, latency: observed - lastHeartbeat };
  };

  console.log(`bench:expiry: ${ORDERS} resting orders over ${MARKETS} markets, timeout T = ${T} s, sweep interval S = ${S} s, target T + S + 1 = ${TARGET_MS / 1000} s`);
  console.log(`database: ${database.label} PostgreSQL`);
  const lines = [['round', 'orders', 'cancelled_count', 'expiry->cancelled_at', 'heartbeat->cancelled_at', 'heartbeat->observed', 'target', 'result']];
  let worst = 0;
  let failed = false;
  for (let i = 1; i <= ROUNDS; i += 1) {
    const r = await round(i);
    worst = Math.max(worst, r.latency);
    const met = r.latency < TARGET_MS && r.cancelledCount === r.resting;
    failed ||= !met;
    lines.push([String(i), String(r.resting), String(r.cancelledCount), `${r.expiry} ms`, `${r.heartbeat} ms`, `${r.latency} ms`, `${TARGET_MS} ms`, met ? 'met' : 'MISSED']);
  }
  printTable(lines);
  console.log(`worst: ${worst} ms from the last heartbeat to the cancellation of the last resting order (observed), target ${TARGET_MS} ms: ${failed ? 'MISSED' : 'met'}`);
  if (failed) process.exitCode = 1;
});

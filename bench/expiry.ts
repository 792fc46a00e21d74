/**
 * npm run bench:expiry: how long after its last heartbeat an account's resting orders are cancelled.
 *
 * The service runs in this process (startService, the same code `npm start` runs) on a real PostgreSQL:
 * an embedded one in a new temporary directory, or DATABASE_URL when set (a database the benchmark may
 * write to). Session timeout T (ORDER_HEARTBEAT_TIMEOUT_SECS) and sweep interval S
 * (ORDER_HEARTBEAT_SWEEP_INTERVAL_SECS) are small. Each round, through the HTTP API, a fresh account
 * places BENCH_ORDERS resting orders (default 1,000) over four markets, sends one heartbeat and then none.
 * The database is polled every 20 ms until the account has no live order left: the latency is the time
 * from the last heartbeat (its `last_seen_at`) to that observation, an upper bound of the real one (the
 * session's `cancelled_at`, written in the cancelling transaction, is shown too). Target: T + S + 1 s.
 *
 * Options (environment): BENCH_TIMEOUT_SECS (T, default 2), BENCH_SWEEP_SECS (S, default 1),
 * BENCH_ORDERS (default 1000), BENCH_ROUNDS (default 3), DATABASE_URL. Exits non-zero when a round
 * misses the target or leaves an order uncancelled.
 */
import { chmod, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { loadConfig } from '../src/config.js';
import { createLogger } from '../src/logger.js';
import { startService, type RunningService } from '../src/server.js';

const T = Number(process.env.BENCH_TIMEOUT_SECS ?? 2);
const S = Number(process.env.BENCH_SWEEP_SECS ?? 1);
const ORDERS = Number(process.env.BENCH_ORDERS ?? 1000);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 3);
const CONCURRENCY = 8;
const POLL_MS = 20;
const MARKETS = 4;
const TARGET_MS = (T + S + 1) * 1000;
const ADMIN = { email: 'bench-expiry-admin@dots.local', password: 'bench-expiry-password' };

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

interface Round {
  orders: number;
  lastHeartbeat: number;
  expiresAt: number;
  cancelledAt: number;
  observed: number;
  cancelledCount: number;
}

class Client {
  constructor(private readonly baseUrl: string) {}

  async call<T = any>(method: string, urlPath: string, body?: unknown, token?: string, expected = [200, 201]): Promise<T> {
    const headers: Record<string, string> = {};
    if (body !== undefined) headers['content-type'] = 'application/json';
    if (token) headers.authorization = `Bearer ${token}`;
    const response = await fetch(`${this.baseUrl}${urlPath}`, { method, headers, body: body === undefined ? undefined : JSON.stringify(body) });
    const text = await response.text();
    if (!expected.includes(response.status)) throw new Error(`${method} ${urlPath}: ${response.status} ${text.slice(0, 300)}`);
    return (text ? JSON.parse(text) : undefined) as T;
  }
}

async function round(service: RunningService, client: Client, tickers: string[], index: number): Promise<Round> {
  const { token, user } = await client.call<{ token: string; user: { id: string } }>('POST', '/api/auth/register', { email: `bench-expiry-${Date.now()}-${index}@example.com`, password: 'bench-expiry-password' });
  // Resting buys that never cross: YES bids from 0.01 to 0.40, one contract each (at most 400 Dots reserved).
  let next = 0;
  const placeSome = async () => {
    for (let i = next++; i < ORDERS; i = next++) {
      await client.call('POST', '/api/portfolio/orders', { ticker: tickers[i % tickers.length], side: 'yes', count: '1', price: (0.01 + (i % 40) / 100).toFixed(2) }, token);
    }
  };
  await Promise.all(Array.from({ length: CONCURRENCY }, placeSome));
  const live = async () => Number((await service.db('orders').where({ account_id: user.id }).whereIn('status', ['OPEN', 'PARTIAL']).count('* as n'))[0]!.n);
  const resting = await live();
  if (resting !== ORDERS) throw new Error(`expected ${ORDERS} resting orders, found ${resting}`);

  const session = await client.call<{ heartbeat_id: string; last_seen_at: string; expires_at: string }>('POST', '/api/portfolio/heartbeat', {}, token);
  for (;;) {
    await sleep(POLL_MS);
    if ((await live()) === 0) break;
    if (Date.now() - Date.parse(session.last_seen_at) > TARGET_MS * 5) throw new Error('the orders were never cancelled');
  }
  const observed = Date.now();
  const row = await service.db('order_sessions').where({ id: session.heartbeat_id }).first('cancelled_at', 'cancelled_count');
  const wrong = await service.db('orders').where({ account_id: user.id }).whereNot({ cancel_reason: 'heartbeat' }).count('* as n');
  if (Number(wrong[0]!.n) !== 0) throw new Error(`${wrong[0]!.n} orders were not cancelled by the heartbeat expiry`);
  return {
    orders: resting,
    lastHeartbeat: Date.parse(session.last_seen_at),
    expiresAt: Date.parse(session.expires_at),
    cancelledAt: (row.cancelled_at as Date).getTime(),
    observed,
    cancelledCount: row.cancelled_count as number,
  };
}

async function main(): Promise<number> {
  let dataDir: string | undefined;
  if (!process.env.DATABASE_URL) {
    dataDir = await mkdtemp(path.join(tmpdir(), 'dots-bench-expiry-'));
    await chmod(dataDir, 0o755);
  }
  const config = loadConfig({
    PORT: '0',
    HOST: '127.0.0.1',
    SEED: 'none',
    LOG_LEVEL: 'warn',
    ADMIN_EMAIL: ADMIN.email,
    ADMIN_PASSWORD: ADMIN.password,
    ORDER_HEARTBEAT_TIMEOUT_SECS: String(T),
    ORDER_HEARTBEAT_SWEEP_INTERVAL_SECS: String(S),
    // All the load comes from one address and one account: per-client budgets would refuse it.
    RATE_LIMITS: 'off',
    ...(process.env.DATABASE_URL ? { DATABASE_URL: process.env.DATABASE_URL } : { DATA_DIR: dataDir! }),
  });
  const service = await startService(config, createLogger(config.logLevel));
  let failed = false;
  try {
    const client = new Client(service.url);
    const admin = (await client.call<{ token: string }>('POST', '/api/auth/login', ADMIN)).token;
    const prefix = `BEX${Date.now().toString(36).toUpperCase()}`;
    await client.call('POST', '/api/admin/series', { ticker: prefix, title: 'Expiry benchmark', category: 'economics', frequency: 'daily' }, admin);
    await client.call('POST', '/api/admin/events', { event_ticker: `${prefix}-E`, series_ticker: prefix, title: 'Expiry benchmark', strike_date: '2031-01-01T00:00:00Z' }, admin);
    const tickers = Array.from({ length: MARKETS }, (_, i) => `${prefix}-E-M${i + 1}`);
    for (const ticker of tickers) await client.call('POST', '/api/admin/markets', { ticker, event_ticker: `${prefix}-E`, title: ticker }, admin);

    console.log(`bench:expiry: ${ORDERS} resting orders over ${MARKETS} markets, timeout T = ${T} s, sweep interval S = ${S} s, target T + S + 1 = ${TARGET_MS / 1000} s`);
    console.log(`database: ${process.env.DATABASE_URL ? 'DATABASE_URL' : `embedded PostgreSQL in ${dataDir}`}`);
    console.log('round  orders  cancelled_count  expiry->cancelled_at  heartbeat->cancelled_at  heartbeat->observed  target    result');
    let worst = 0;
    for (let i = 1; i <= ROUNDS; i += 1) {
      const r = await round(service, client, tickers, i);
      const latency = r.observed - r.lastHeartbeat;
      worst = Math.max(worst, latency);
      const met = latency < TARGET_MS && r.cancelledCount === r.orders;
      if (!met) failed = true;
      console.log(
        `${String(i).padStart(5)}  ${String(r.orders).padStart(6)}  ${String(r.cancelledCount).padStart(15)}  ${`${r.cancelledAt - r.expiresAt} ms`.padStart(20)}  ${`${r.cancelledAt - r.lastHeartbeat} ms`.padStart(23)}  ${`${latency} ms`.padStart(19)}  ${`${TARGET_MS} ms`.padStart(8)}  ${met ? 'met' : 'MISSED'}`,
      );
    }
    console.log(`worst: ${worst} ms from the last heartbeat to the cancellation of the last resting order (observed), target ${TARGET_MS} ms: ${failed ? 'MISSED' : 'met'}`);
  } finally {
    await service.stop();
    if (dataDir) await rm(dataDir, { recursive: true, force: true });
  }
  return failed ? 1 : 0;
}

// Exit explicitly, with the verdict: a client or timer left open must not keep the process alive.
main().then(
  (code) => process.exit(code),
  (error: unknown) => {
    console.error('bench:expiry:', error);
    process.exit(1);
  },
);

/* eslint max-lines: ["error", { "max": 540, "skipBlankLines": true, "skipComments": true }] -- one benchmark run, its rows beside the setup and the report they share */
/**
 * npm run bench:orders: order placement and batch cancel through the real service, beside what the same
 * PostgreSQL does with a minimal durable transaction (docs/performance.md).
 *
 * The service runs in this process (bench/lib.ts startInProcess); the load generator (bench/orders-load.ts)
 * in a worker thread, so that the service keeps the main thread: 32 clients, each on its own keep-alive
 * connection, one request at a time, 1 s unmeasured then BENCH_DURATION s (default 5) measured per row. In
 * the flow of (a) and (b) every client alternates a resting order (its maker account buys YES at 0.40) and a
 * crossing one on the same market (its taker account buys NO at 0.70, which meets the bid and mints a pair):
 *   (a) one market; (b) 16 markets, each in its own event, client k's i-th pair on market (k + i) mod 16;
 *   (c) batch cancel: 1,000 resting bids (0.01..0.30) of one account on one market, then one DELETE
 *       /api/portfolio/orders/batched naming them; 5 times;
 *   (d) crossing-heavy: buys of 1 at prices spread over 0.45..0.55, YES and NO in turn, so that most cross;
 *   (e) batch placement: 8 clients, each sending batches of 20 orders, resting YES then crossing NO buys;
 *   (f) (b)'s flow on fresh markets, every placement signed with its account's RSA API key (KALSHI-ACCESS-*),
 *       the signatures made by the load thread before each round: 3 signed rounds, each between two bearer
 *       rounds of (b)'s flow and taken as a share of their mean (the machine's speed drifts by 10-15% over a
 *       minute, more than the checks cost); the table shows the round with the median share;
 *   (g) (b)'s flow without HTTP: 32 callers in the main thread calling the trading service's placeOrder (what
 *       the placeOrder handler calls). No target: it shows how much of (b)'s rate the HTTP layer takes.
 * Baselines, same database and duration: 32 pg clients looping BEGIN; UPDATE one row; INSERT one row; COMMIT,
 * each on its own row; on one shared row (serialised on its lock, as placements on one market); and on own
 * rows with a pg_notify before COMMIT (as the feed's outbox statement in every trading transaction).
 * Then (a) and (b) again on fresh markets against `node dist/main.js` (bench/lib.ts startServiceProcess) with
 * WEB_CONCURRENCY=1 and 2, the in-process service stopped first; no target on these rows.
 *
 * Targets (exit code 1 when one is missed): one market >= 400 placements/s, 16 markets >= 1,200/s, p99 <
 * 100 ms on both, batch cancel of 1,000 p50 < 250 ms, signed placements (f) >= 85% of the bearer rate around
 * them (the median of the rounds' shares), no failed request.
 */
import { generateKeyPairSync } from 'node:crypto';
import { performance } from 'node:perf_hooks';
import pLimit from 'p-limit';
import pg from 'pg';
import type { RunningService } from '../src/server.js';
import {
  api, benchDatabase, benchSeries, type Defer, durationSetting, fmt, median, percent, percentile, printTable, processLabel, register, reportTargets, RUN,
  runBench, sleep, startInProcess, startServiceProcess, startWorker, type ServiceProcess,
} from './lib.js';
import type { LoadJob, LoadResult, OnceResult, WireRequest } from './orders-load.js';
import { type CpuTime, machineCpu, ownThreadCpu, postgresCpuTime, processesCpu } from './proc.js';

const DURATION = durationSetting(5);
const WARMUP = 1;
const CONNECTIONS = 32;
const BATCH_REPEATS = 5;
const MARKETS = 16;
const BATCH = 1000;
/** (e): clients sending batch placements, and the orders per batch. */
const BATCH_CLIENTS = 8;
const ORDERS_PER_BATCH = 20;

const TARGET_ONE_MARKET = 400;
const TARGET_MANY_MARKETS = 1200;
const TARGET_P99_MS = 100;
const TARGET_BATCH_MS = 250;
/** Placements signed with API keys: at least this share of the bearer-token rate (the signature checks cost at most 15%). */
const TARGET_SIGNED_SHARE = 0.85;
/** (f)'s signed rounds, each between two bearer rounds; odd, so that the median share is one round's. */
const SIGNED_ROUNDS = 3;

const log = (line: string) => console.log(`bench:orders: ${line}`);

/** The load thread, aimed at the service on `port`, until the bench ends. */
function loadClient(port: number, defer: Defer) {
  const worker = startWorker('./orders-load.ts', defer);
  return {
    load: (clients: WireRequest[][], options: { warmupMs: number; durationMs: number | null; maxRequests?: number; collectIds?: boolean }) =>
      worker.ask<LoadResult>({ type: 'load', port, clients, ...options } satisfies LoadJob),
    presign: (options: Omit<Extract<LoadJob, { type: 'presign' }>, 'type'>) => worker.ask<void>({ type: 'presign', ...options } satisfies LoadJob),
    once: (request: WireRequest) => worker.ask<OnceResult>({ type: 'once', port, request } satisfies LoadJob),
  };
}
type LoadClient = ReturnType<typeof loadClient>;

/** CPU per request, µs, and the system share of it. */
type CpuPerRequest = { us: number; sysShare?: number };
/** The CPU a row took: the service's and PostgreSQL's per request, and the machine's share busy. */
type Usage = { server: CpuPerRequest; pg: CpuPerRequest | undefined; machine: number | undefined };

/** Starts reading CPU time; the function returned ends it. `serverCpu`: the CPU counted as the service's (default: this main thread). */
function sample(postmasterPid: number | undefined, serverCpu: () => CpuTime | undefined = () => ownThreadCpu(process.pid)): (requests: number) => Usage {
  const postgresCpu = () => (postmasterPid === undefined ? undefined : postgresCpuTime(postmasterPid));
  const elu = performance.eventLoopUtilization();
  const [main0, pg0, m0] = [serverCpu(), postgresCpu(), machineCpu()];
  return (requests) => {
    const busy = performance.eventLoopUtilization(elu);
    const [main1, pg1, m1] = [serverCpu(), postgresCpu(), machineCpu()];
    const perRequest = (a: CpuTime, b: CpuTime): CpuPerRequest => {
      const [user, sys] = [b.user - a.user, b.sys - a.sys];
      return { us: ((user + sys) * 1000) / Math.max(1, requests), sysShare: user + sys > 0 ? sys / (user + sys) : undefined };
    };
    return {
      // CPU time when /proc has it (the event loop's busy time also counts the time the OS runs others)
      server: main0 && main1 ? perRequest(main0, main1) : { us: (busy.active * 1000) / Math.max(1, requests) },
      pg: pg0 && pg1 ? perRequest(pg0, pg1) : undefined,
      machine: m0 && m1 && m1.total > m0.total ? (m1.busy - m0.busy) / (m1.total - m0.total) : undefined,
    };
  };
}

/** Trading's statements as pg_stat_activity shows their text, so that a row says where PostgreSQL's time goes (the rest: "other"). */
const STATEMENT_KINDS: ReadonlyArray<readonly [string, RegExp]> = [
  ['the write statement', /^with\s+ins as \(\s*insert into orders\b/],
  ['placements_begin', /placements_begin\(/],
  ['feed_append_records', /feed_append_records\(/],
  ['COMMIT', /^\s*commit\b/i],
];

/**
 * What the service's pooled connections are doing, sampled every 25 ms from pg_stat_activity on the side
 * connection `client`: waiting for a lock, in a transaction waiting for the service's next statement, executing (WAL
 * flushes included), idle in the pool; and which statements the executing samples ran. `stop` ends it.
 */
function sampleActivity(client: pg.Client): () => Promise<string> {
  const totals = { lock: 0, inTransaction: 0, executing: 0, idle: 0 };
  const executed = new Map<string, number>();
  let samples = 0;
  let running = true;
  const loop = (async () => {
    while (running) {
      const { rows } = await client.query<{ state: string | null; wait_event_type: string | null; query: string }>(
        `select state, wait_event_type, query from pg_stat_activity
          where datname = current_database() and backend_type = 'client backend' and pid <> pg_backend_pid()`,
      );
      for (const { state, wait_event_type: waitType, query } of rows) {
        if (waitType === 'Lock') totals.lock += 1;
        else if (state === 'idle') totals.idle += 1;
        else if (state?.startsWith('idle in transaction')) totals.inTransaction += 1;
        else if (state === 'active') {
          totals.executing += 1;
          const kind = STATEMENT_KINDS.find(([, pattern]) => pattern.test(query))?.[0] ?? 'other';
          executed.set(kind, (executed.get(kind) ?? 0) + 1);
        }
      }
      samples += 1;
      await sleep(25);
    }
  })();
  return async () => {
    running = false;
    await loop;
    const avg = (n: number) => (n / Math.max(1, samples)).toFixed(1);
    const split = [...executed].sort((a, b) => b[1] - a[1]).map(([kind, n]) => `${kind} ${((n / Math.max(1, totals.executing)) * 100).toFixed(0)}%`);
    return (
      `service's connections on average: ${avg(totals.lock)} waiting for a lock, ${avg(totals.inTransaction)} in a transaction waiting for ` +
      `the service's next statement, ${avg(totals.executing)} executing (${split.join(', ') || 'nothing sampled'}), ${avg(totals.idle)} idle (pool or feed listener)`
    );
  };
}

/** Placements per transaction on these markets (warm-up included): orders per distinct created_at, the inserting transaction's start. */
async function placementsPerTransaction(client: pg.Client, tickers: string[]): Promise<number> {
  const { rows } = await client.query<{ orders: number; transactions: number }>(
    `select count(*)::int as orders, count(distinct o.created_at)::int as transactions
       from orders o join markets m on m.id = o.market_id where m.ticker = any($1)`,
    [tickers],
  );
  return rows[0]!.orders / Math.max(1, rows[0]!.transactions);
}

interface Row extends Partial<Usage> {
  name: string;
  /** Per second (placements or transactions); undefined for one-shot rows. */
  rate?: number;
  p50: number;
  p99?: number;
  max?: number;
  statements?: string;
  note?: string;
  failed: number;
}

/** The SQL statements the service runs while `work` runs (knex's query events: BEGIN and COMMIT included). */
async function countStatements<T>(service: RunningService, work: () => Promise<T>): Promise<{ result: T; statements: string[] }> {
  const statements: string[] = [];
  const sent = (data: { sql: string }) => statements.push(data.sql.trim());
  service.db.on('query', sent);
  try {
    return { result: await work(), statements };
  } finally {
    service.db.removeListener('query', sent);
  }
}

/** Statements from BEGIN to COMMIT, both included (a placement holds its market's lock from the first after BEGIN). */
const inTransaction = (statements: string[]) => statements.findIndex((s) => /^commit/i.test(s)) - statements.findIndex((s) => /^begin/i.test(s)) + 1;

/** A minimal durable transaction through pg, looped by 32 clients: on rows of their own, on one shared row, or with a pg_notify. */
async function baseline(url: string, postmasterPid: number | undefined, variant: 'own' | 'shared' | 'notify'): Promise<Row> {
  const clients = Array.from({ length: CONNECTIONS }, () => new pg.Client({ connectionString: url }));
  await Promise.all(clients.map((client) => client.connect()));
  try {
    const setup = clients[0]!;
    await setup.query('drop table if exists bench_txn_log, bench_txn_rows');
    await setup.query('create table bench_txn_rows (id integer primary key, n bigint not null, updated_at timestamptz not null default now())');
    await setup.query('create table bench_txn_log (id bigint generated always as identity primary key, row_id integer not null, n bigint not null, created_at timestamptz not null default now())');
    await setup.query('insert into bench_txn_rows (id, n) select g, 0 from generate_series(0, $1::int) g', [CONNECTIONS]);
    const from = performance.now() + WARMUP * 1000;
    const until = from + DURATION * 1000;
    const latencies: number[] = [];
    let failed = 0;
    const stop = sleep(WARMUP * 1000).then(() => sample(postmasterPid));
    await Promise.all(
      clients.map(async (client, k) => {
        const rowId = variant === 'shared' ? 0 : k + 1;
        while (performance.now() < until) {
          const started = performance.now();
          try {
            await client.query('begin');
            await client.query('update bench_txn_rows set n = n + 1, updated_at = now() where id = $1', [rowId]);
            await client.query('insert into bench_txn_log (row_id, n) values ($1, 1)', [rowId]);
            if (variant === 'notify') await client.query(`select pg_notify('bench_orders_baseline', $1)`, [String(rowId)]);
            await client.query('commit');
          } catch {
            failed += 1;
            await client.query('rollback').catch(() => {});
          }
          const ended = performance.now();
          if (ended >= from && ended <= until) latencies.push(ended - started);
        }
      }),
    );
    const usage = (await stop)(latencies.length);
    latencies.sort((a, b) => a - b);
    await setup.query('drop table if exists bench_txn_log, bench_txn_rows');
    const what = { own: 'UPDATE own row; INSERT', shared: 'UPDATE 1 shared row; INSERT', notify: 'UPDATE own row; INSERT; pg_notify' }[variant];
    const [rate, p50, p99] = [latencies.length / DURATION, percentile(latencies, 50), percentile(latencies, 99)];
    const statements = variant === 'notify' ? '5' : '4';
    return { name: `baseline: ${CONNECTIONS} pg clients, BEGIN; ${what}; COMMIT`, rate, p50, p99, ...usage, statements, failed };
  } finally {
    await Promise.all(clients.map((client) => client.end().catch(() => {})));
  }
}

const place = (token: string, body: Record<string, unknown>): WireRequest => ({ method: 'POST', path: '/api/portfolio/orders', token, body: JSON.stringify(body) });
const resting = (ticker: string, token: string) => place(token, { ticker, side: 'yes', action: 'buy', count: '1', price: '0.40' });
const crossing = (ticker: string, token: string) => place(token, { ticker, side: 'no', action: 'buy', count: '1', price: '0.70' });

/** The service on its database, the load thread aimed at it, the markets, the accounts and their API keys: what every row reads. */
async function setUp(defer: Defer) {
  const database = await benchDatabase('bench-orders', 'bench_orders', defer);
  /** A connection beside the service's: what its connections do, and the facts of the run. */
  const side = new pg.Client({ connectionString: database.url });
  await side.connect();
  defer(() => side.end());
  // Many registrations at once: the password hashing queue takes them all. Stopped before the rows of
  // `node dist/main.js`, so that its background work stays out of them.
  const service = await startInProcess(database.url, defer, { PASSWORD_HASH_QUEUE: '10000' });
  const base = service.url;
  const client = loadClient(Number(new URL(base).port), defer);

  // Markets, each in its own event: every row's, those of `node dist/main.js` too (made here: the same database).
  const series = await benchSeries(base, `BENCHO-${RUN}`);
  const [market, markets] = [series.market, (name: string) => series.markets(name, MARKETS)];
  const single = await market('ONE');
  const [many, signedMarkets, directMarkets, crossMarkets, quoteMarkets] = [await markets('MANY'), await markets('SIGNED'), await markets('DIRECT'), await markets('CROSS'), await markets('QUOTE')];
  const batchMarket = await market('BATCH');
  const scratch = await market('SCRATCH');
  const processMarkets = new Map<number, { one: string; many: string[] }>();
  for (const workers of [1, 2]) processMarkets.set(workers, { one: await market(`ONEW${workers}`), many: await markets(`W${workers}MANY`) });

  // A maker and a taker account for every client of any row, and one for the batch cancel.
  const traders = Math.max(CONNECTIONS, BATCH_CLIENTS);
  log(`registering ${2 * traders + 1} accounts`);
  const limit = pLimit(4);
  const registered = await Promise.all(Array.from({ length: 2 * traders + 1 }, (_, i) => limit(() => register(base, `bench-orders-${RUN.toLowerCase()}-${i}@example.com`))));
  const makers = registered.slice(0, traders).map((r) => r.token);
  const takers = registered.slice(traders, 2 * traders).map((r) => r.token);
  // An RSA API key (scope trade) for every maker and taker, all with one key pair: the signature covers
  // timestamp + method + path, so one pre-signed signature serves any of them, once.
  const keyPair = generateKeyPairSync('rsa', { modulusLength: 2048 });
  const publicKey = keyPair.publicKey.export({ type: 'spki', format: 'pem' }).toString();
  const keyOf = new Map<string, string>();
  const created = (token: string) => api<{ api_key: { id: string } }>(base, 'POST', '/api/portfolio/api-keys', { name: 'bench', kind: 'rsa', scopes: ['trade'], public_key: publicKey }, token);
  await Promise.all([...makers, ...takers].map((token) => limit(async () => keyOf.set(token, (await created(token)).api_key.id))));
  return {
    database, side, service, client, single, many, signedMarkets, directMarkets, crossMarkets, quoteMarkets, batchMarket, processMarkets, makers, takers, keyOf,
    ...(await statementsPerPlacement(service, client, scratch, makers[0]!, takers[0]!)),
    accountOf: new Map(registered.map((r) => [r.token, r.accountId])),
    batchToken: registered[2 * traders]!.token,
    pem: keyPair.privateKey.export({ type: 'pkcs8', format: 'pem' }).toString(),
  };
}
type Run = Awaited<ReturnType<typeof setUp>>;

/**
 * The statements of a resting and a crossing placement, each alone, on a scratch market (the service's own query
 * events). The background sweeps share the pool and may run a statement meanwhile: the fewest of three tries counts.
 */
async function statementsPerPlacement(service: RunningService, client: LoadClient, scratch: string, maker: string, taker: string) {
  let restingOnce: string[] = [];
  let crossingOnce: string[] = [];
  const fewest = (a: string[], b: string[]) => (a.length > 0 && a.length <= b.length ? a : b);
  for (let attempt = 0; attempt < 3; attempt++) {
    const rest = await countStatements(service, () => client.once(resting(scratch, maker)));
    const cross = await countStatements(service, () => client.once(crossing(scratch, taker)));
    const statuses = [rest, cross].map(({ result }) => (result.status === 201 ? (JSON.parse(result.text) as { order: { status: string } }).order.status : `${result.status} ${result.text.slice(0, 300)}`));
    if (statuses[0] !== 'OPEN' || statuses[1] !== 'FILLED') throw new Error(`scratch placements answered ${statuses.join(', ')}, not OPEN, FILLED`);
    restingOnce = fewest(restingOnce, rest.statements);
    crossingOnce = fewest(crossingOnce, cross.statements);
  }
  return { restingOnce, crossingOnce };
}

/** Client k: a resting order then a crossing one on the same market, its i-th pair on market (k + i) mod n. */
const cycles = ({ makers, takers }: Run, tickers: string[]) =>
  Array.from({ length: CONNECTIONS }, (_, k) =>
    tickers.flatMap((_, i) => {
      const ticker = tickers[(k + i) % tickers.length]!;
      return [resting(ticker, makers[k]!), crossing(ticker, takers[k]!)];
    }),
  );
/** (d): client k's i-th placement a buy of 1 at 0.45..0.55, YES by its maker and NO by its taker in turn, on market (k + i/2) mod 16. */
const crossingFlow = ({ makers, takers, crossMarkets }: Run) =>
  Array.from({ length: CONNECTIONS }, (_, k) =>
    Array.from({ length: 2 * 11 * MARKETS }, (_, i) => {
      const yes = i % 2 === 0;
      const price = ((45 + ((k * 7 + i * 3) % 11)) / 100).toFixed(2);
      return place(yes ? makers[k]! : takers[k]!, { ticker: crossMarkets[(k + (i >> 1)) % MARKETS]!, side: yes ? 'yes' : 'no', action: 'buy', count: '1', price });
    }),
  );
/** (e): client k sends 20 resting YES buys at 0.40 (its maker), then 20 crossing NO buys at 0.70 (its taker), the j-th on market (k + j) mod 16. */
const batchFlow = ({ makers, takers, quoteMarkets }: Run) =>
  Array.from({ length: BATCH_CLIENTS }, (_, k) => {
    const orders = (side: string, price: string) => Array.from({ length: ORDERS_PER_BATCH }, (_, j) => ({ ticker: quoteMarkets[(k + j) % MARKETS]!, side, action: 'buy', count: '1', price }));
    const batch = (token: string, side: string, price: string): WireRequest => ({ method: 'POST', path: '/api/portfolio/orders/batched', token, body: JSON.stringify({ orders: orders(side, price) }) });
    return [batch(makers[k]!, 'yes', '0.40'), batch(takers[k]!, 'no', '0.70')];
  });

/** A row of placements on `tickers`: orders placed per second, latencies, CPU per order placed, and a note of statuses and placements per transaction. */
async function figures(side: pg.Client, name: string, tickers: string[], measured: { latencies: number[]; orderStatuses: Record<string, number>; seconds: number; usage: Usage }) {
  const placed = Object.values(measured.orderStatuses).reduce((a, b) => a + b, 0);
  const sorted = Float64Array.from(measured.latencies).sort();
  const statuses = Object.entries(measured.orderStatuses).map(([s, c]) => `${s} ${((c / Math.max(1, placed)) * 100).toFixed(0)}%`);
  const grouping = await placementsPerTransaction(side, tickers);
  const note = `orders ${statuses.join(', ')}; ${grouping.toFixed(1)} placements per transaction`;
  return { name, rate: placed / measured.seconds, p50: percentile(sorted, 50), p99: percentile(sorted, 99), max: sorted.at(-1), ...measured.usage, note };
}

/**
 * A row of placements over HTTP: by default the flow of (a) and (b). `on`: the service as a process of its
 * own (and a load thread aimed at it); `clients`: another flow; `signed`: every request signed with its
 * account's API key. Rates and CPU are per order placed, latencies per request.
 */
async function placementRow(run: Run, name: string, tickers: string[], options: { on?: { service: ServiceProcess; client: LoadClient }; clients?: WireRequest[][]; signed?: boolean } = {}): Promise<Row> {
  const { on } = options;
  const flow = options.clients ?? cycles(run, tickers);
  const requests = options.signed ? flow.map((cycle) => cycle.map((request) => ({ ...request, keyId: run.keyOf.get(request.token)! }))) : flow;
  const loading = (on?.client ?? run.client).load(requests, { warmupMs: WARMUP * 1000, durationMs: DURATION * 1000 });
  await sleep(WARMUP * 1000);
  const stop = sample(run.database.postmasterPid, on && (() => processesCpu(on.service.pids())));
  const spread = on && on.service.workers > 1 ? on.service.connections() : undefined;
  const activity = sampleActivity(run.side);
  const result = await loading;
  const usage = stop(result.placed);
  const connections = await activity();
  const row = await figures(run.side, name, tickers, { ...result, seconds: result.elapsedMs / 1000, usage });
  const ok = result.statuses['201'] ?? 0;
  const failed = result.latencies.length - ok + result.refused;
  return {
    ...row,
    statements: on || options.clients ? '-' : `${run.restingOnce.length}/${run.crossingOnce.length}`,
    failed,
    note:
      `${ok} requests answered 201 (${(ok / (result.elapsedMs / 1000)).toFixed(0)}/s), ${row.note}; ${connections}` +
      `${spread ? `; connections held by each worker: ${[...spread.values()].join(', ')}` : ''}${failed > 0 ? `; failures: ${result.failures.join(' | ')}` : ''}`,
  };
}

/** (g): the cycles of (b) on `tickers` as calls of the trading service's placeOrder in this thread, one at a time per caller. */
async function inProcessRow(run: Run, name: string, tickers: string[]): Promise<Row> {
  type PlaceOrderInput = Parameters<RunningService['services']['trading']['placeOrder']>[1];
  const calls = cycles(run, tickers).map((cycle) => cycle.map((request) => ({ accountId: run.accountOf.get(request.token)!, input: JSON.parse(request.body!) as PlaceOrderInput })));
  const latencies: number[] = [];
  const orderStatuses: Record<string, number> = {};
  const failures: string[] = [];
  const from = performance.now() + WARMUP * 1000;
  const until = from + DURATION * 1000;
  const stop = sleep(WARMUP * 1000).then(() => sample(run.database.postmasterPid));
  await Promise.all(
    calls.map(async (cycle) => {
      for (let i = 0; performance.now() < until; i++) {
        const { accountId, input } = cycle[i % cycle.length]!;
        const begun = performance.now();
        const outcome = await run.service.services.trading.placeOrder(accountId, input).then((order) => order.status as string, (error: unknown) => ({ error }));
        const ended = performance.now();
        if (begun < from || ended > until) continue;
        latencies.push(ended - begun);
        if (typeof outcome !== 'string') failures.push(String(outcome.error).slice(0, 300));
        else orderStatuses[outcome] = (orderStatuses[outcome] ?? 0) + 1;
      }
    }),
  );
  const usage = (await stop)(latencies.length - failures.length);
  const row = await figures(run.side, name, tickers, { latencies, orderStatuses, seconds: DURATION, usage });
  return { ...row, statements: '-', failed: failures.length, note: `${row.note}${failures.length > 0 ? `; failures: ${failures.slice(0, 5).join(' | ')}` : ''}` };
}

/** (c) batch cancel of 1,000 resting orders, one request timed from the load client's thread. */
async function cancelRow({ service, client, batchToken, batchMarket }: Run): Promise<Row> {
  const cancelTimes: number[] = [];
  let cancelFailed = 0;
  /** The fewest statements a cancel ran (the background sweeps may add one meanwhile). */
  let cancelStatements: number | undefined;
  const restingPrices = Array.from({ length: 30 }, (_, i) => ((i + 1) / 100).toFixed(2));
  const batchCycles = Array.from({ length: CONNECTIONS }, (_, k) =>
    restingPrices.map((_, i) => place(batchToken, { ticker: batchMarket, side: 'yes', action: 'buy', count: '1', price: restingPrices[(k + i) % restingPrices.length] })),
  );
  let batchNote = '';
  for (let repeat = 0; repeat < BATCH_REPEATS; repeat++) {
    const placed = await client.load(batchCycles, { warmupMs: 0, durationMs: null, maxRequests: BATCH, collectIds: true });
    if (placed.ids.length !== BATCH || placed.orderStatuses.OPEN !== BATCH) throw new Error(`placing ${BATCH} resting orders: ${placed.ids.length} placed, statuses ${JSON.stringify(placed.orderStatuses)}; ${placed.failures.join(' | ')}`);
    batchNote = `the ${BATCH} resting orders placed in ${(placed.elapsedMs / 1000).toFixed(1)} s (${(BATCH / (placed.elapsedMs / 1000)).toFixed(0)}/s, one account, one market)`;
    const request: WireRequest = { method: 'DELETE', path: '/api/portfolio/orders/batched', token: batchToken, body: JSON.stringify({ order_ids: placed.ids }) };
    const { result, statements } = await countStatements(service, () => client.once(request));
    cancelStatements = Math.min(cancelStatements ?? Infinity, statements.length);
    const cancelled = result.status === 200 ? (JSON.parse(result.text) as { results: Array<{ status?: string }> }).results.filter((r) => r.status === 'cancelled').length : 0;
    if (cancelled !== BATCH) {
      cancelFailed += 1;
      batchNote += `; a cancel answered ${result.status}, ${cancelled} cancelled: ${result.text.slice(0, 300)}`;
    }
    cancelTimes.push(result.ms);
  }
  cancelTimes.sort((a, b) => a - b);
  return {
    name: `(c) batch cancel of ${BATCH} (one DELETE, ${BATCH_REPEATS}x)`,
    p50: percentile(cancelTimes, 50),
    max: cancelTimes.at(-1),
    statements: String(cancelStatements),
    failed: cancelFailed,
    note: `${cancelTimes.map((ms) => ms.toFixed(0)).join(', ')} ms; ${batchNote}`,
  };
}

/**
 * (f): signed rounds between bearer rounds of (b)'s flow. Before each round the load thread makes a round's
 * signatures (enough for 1.5 times the rate of the last bearer round); the service sits idle meanwhile, and
 * an idle Node process runs slower for a while after, so a bearer round follows the same pause. The row: the
 * signed round with the median share of the bearer rate around it.
 */
async function signedRow(run: Run, bearerRow: Row): Promise<{ row: Row; share: number; shareList: string }> {
  const bearerRounds: Row[] = [];
  const signedRounds: Row[] = [];
  const round = async (name: string, tickers: string[], signed: boolean): Promise<Row> => {
    const rate = (bearerRounds.at(-1) ?? bearerRow).rate ?? 0;
    await run.client.presign({ pem: run.pem, count: Math.ceil(rate * (WARMUP + DURATION) * 1.5) + 100, method: 'POST', path: '/api/portfolio/orders', useMs: (WARMUP + DURATION) * 1000 });
    return placementRow(run, name, tickers, { signed });
  };
  const bearerRound = async () => bearerRounds.push(await round(`(b) again, bearer tokens, round ${bearerRounds.length + 1}`, run.many, false));
  await bearerRound();
  for (let i = 0; i < SIGNED_ROUNDS; i++) {
    signedRounds.push(await round(`(f) place, ${MARKETS} markets, ${CONNECTIONS} clients, signed (RSA API keys)`, run.signedMarkets, true));
    await bearerRound();
  }
  const signedShares = signedRounds.map((row, i) => row.rate! / ((bearerRounds[i]!.rate! + bearerRounds[i + 1]!.rate!) / 2));
  const share = median(signedShares);
  const row = signedRounds[signedShares.indexOf(share)]!;
  const shareList = signedShares.map(percent).join(', ');
  Object.assign(row, {
    name: `${row.name}, median of ${SIGNED_ROUNDS} rounds`,
    statements: '-',
    failed: [...signedRounds, ...bearerRounds].reduce((n, r) => n + r.failed, 0),
    note:
      `${row.note}; each request also records its signature (one insert per event-loop turn, shared); ` +
      `signed rounds ${signedRounds.map((r) => fmt(r.rate)).join(', ')}/s, bearer rounds around them ${bearerRounds.map((r) => fmt(r.rate)).join(', ')}/s, ` +
      `shares ${shareList}; its failed column counts all ${signedRounds.length + bearerRounds.length} rounds`,
  });
  return { row, share, shareList };
}

/** (a) and (b) again on the service as deployed, a process of its own: WEB_CONCURRENCY=1, then 2; side by side, each of (a) and (b) with 1 worker process, then 2. */
async function processRows(run: Run, defer: Defer): Promise<Row[]> {
  const byProcess: Row[][] = [];
  for (const [workers, { one, many }] of run.processMarkets) {
    const label = processLabel(workers);
    log(`starting ${label} on the same database`);
    const spawned = await startServiceProcess({ databaseUrl: run.database.url, workers }, defer);
    const on = { service: spawned, client: loadClient(Number(new URL(spawned.url).port), defer) };
    const a = await placementRow(run, `(a) place, 1 market, ${CONNECTIONS} clients, ${label}`, [one], { on });
    byProcess.push([a, await placementRow(run, `(b) place, ${MARKETS} markets, ${CONNECTIONS} clients, ${label}`, many, { on })]);
    await spawned.stop();
  }
  return [byProcess[0]![0]!, byProcess[1]![0]!, byProcess[0]![1]!, byProcess[1]![1]!];
}

const cpuCell = (cpu: CpuPerRequest | undefined) => (cpu === undefined ? '-' : `${fmt(cpu.us)}${cpu.sysShare === undefined ? '' : ` (${(cpu.sysShare * 100).toFixed(0)}% sys)`}`);
/** The rows the summary lines name. */
type Named = Record<'one' | 'bearer' | 'crossing' | 'batch' | 'own' | 'inProcess', Row>;

/** The table, its legend and the summary lines. */
async function report({ side, database, restingOnce, crossingOnce }: Run, rows: Row[], { one, bearer, crossing, batch, own, inProcess }: Named, seconds: { setup: number; measure: number }) {
  const { rows: facts } = await side.query<{ version: string; fsync: string; synchronous_commit: string; preloaded: string; orders: number; trades: number }>(
    `select current_setting('server_version') as version, current_setting('fsync') as fsync,
            current_setting('synchronous_commit') as synchronous_commit, current_setting('shared_preload_libraries') as preloaded,
            (select count(*)::int from orders) as orders, (select count(*)::int from trades) as trades`,
  );
  const settings = facts[0]!;
  console.log(
    `\norders benchmark: PostgreSQL ${settings.version} (${database.label}) (fsync ${settings.fsync}, synchronous_commit ${settings.synchronous_commit}` +
      // Extensions loaded into every backend (pg_stat_statements tracking nested statements, say) slow each statement.
      `${settings.preloaded ? `; shared_preload_libraries ${settings.preloaded}` : ''}); Node ${process.version}; service pool of 10 connections`,
  );
  console.log(
    `${CONNECTIONS} clients on keep-alive connections (load client in a worker thread), ${DURATION} s per row after ${WARMUP} s warm-up; ` +
      `in (a), (b) and (e) half the placements rest (YES buy 0.40), half cross (NO buy 0.70); service log level ${process.env.LOG_LEVEL ?? 'info'} (to /dev/null)\n`,
  );
  printTable([
    ['row', 'per s', 'p50 ms', 'p99 ms', 'max ms', 'srv cpu µs/req', 'pg cpu µs/req', 'cpu %', 'stmts/req', 'failed'],
    ...rows.map((row) => [row.name, fmt(row.rate), fmt(row.p50, 1), fmt(row.p99, 1), fmt(row.max, 1), cpuCell(row.server), cpuCell(row.pg), row.machine === undefined ? '-' : (row.machine * 100).toFixed(0), row.statements ?? '-', String(row.failed)]),
  ]);
  for (const row of rows) if (row.note) console.log(`  ${row.name}: ${row.note}`);
  console.log(`
per s: orders placed (or baseline transactions) per second; p50/p99/max: per request (in (e) per batch of 20 orders, in (g) per call); srv cpu
µs/req: CPU time of the main thread per order placed (or transaction)
(the service runs there; the load client runs in a worker; the baselines' pg clients run in the main thread), with its kernel
share (sys: mostly socket I/O); pg cpu µs/req: CPU time of the embedded PostgreSQL per request (all its processes); cpu %: the
whole machine's CPU use during the row (2 cores are 100%; other work on the machine included); stmts/req: SQL statements the
service ran for one request (resting/crossing placement), BEGIN and COMMIT included.
Rows "node dist/main.js WEB_CONCURRENCY=N": the service as deployed, a process of its own on the same database (fresh
markets, the same accounts; LOG_LEVEL=warn, so no access log; a pool of 10 connections per worker process), the service of
this process stopped; srv cpu µs/req there is the CPU time of all its processes per request (with N=2: the primary and its
2 workers), from /proc; no target on these rows.`);
  console.log(
    `\nstatements per placement: resting ${restingOnce.length} (${inTransaction(restingOnce)} from BEGIN to COMMIT), ` +
      `crossing ${crossingOnce.length} (${inTransaction(crossingOnce)}), each alone; placements arriving while a ` +
      `transaction of placements runs wait and go together in the next one (one at a time per process): on one market ${(1000 / one.rate!).toFixed(1)} ms per placement (1 / rate)`,
  );
  const ofBaseline = (row: Row) => percent(row.rate! / own.rate!);
  console.log(
    `\nratios to the own-row durable baseline (${fmt(own.rate)}/s): (a) ${ofBaseline(one)}, (b) ${ofBaseline(bearer)}, ` +
      `(d) ${ofBaseline(crossing)} (p99 ${fmt(crossing.p99, 1)} ms), (e) ${ofBaseline(batch)} in orders/s ` +
      `(p99 per batch of ${ORDERS_PER_BATCH} ${fmt(batch.p99, 1)} ms; ${(batch.rate! / bearer.rate!).toFixed(1)} times the single placements of (b)); ` +
      `without HTTP (g) ${ofBaseline(inProcess)}, (b) being ${percent(bearer.rate! / inProcess.rate!)} of it`,
  );
  // A row's rate with both cores as busy as its CPU per placement allows (rate over the machine's CPU use),
  // against the baseline: a ceiling that only less CPU per placement raises (the load thread's included).
  const atFullCpu = (row: Row) => (row.machine ? percent(row.rate! / row.machine / own.rate!) : '-');
  console.log(
    `with the whole machine busy at each row's CPU per placement: (a) ${atFullCpu(one)}, (b) ${atFullCpu(bearer)}, ` +
      `(d) ${atFullCpu(crossing)}, (e) ${atFullCpu(batch)}, (g) ${atFullCpu(inProcess)} of the baseline (which ran at ${fmt((own.machine ?? NaN) * 100)}% CPU)`,
  );
  console.log(`\nsetup ${seconds.setup.toFixed(0)} s, measuring ${seconds.measure.toFixed(0)} s; ${settings.orders} orders, ${settings.trades} trades in the database`);
}

runBench('orders', async (defer) => {
  const started = performance.now();
  const run = await setUp(defer);
  const setup = (performance.now() - started) / 1000;
  log(`setup ${setup.toFixed(1)} s; measuring (${WARMUP} s warm-up + ${DURATION} s per row)`);
  const measureStarted = performance.now();
  const one = await placementRow(run, `(a) place, 1 market, ${CONNECTIONS} clients`, [run.single]);
  const bearer = await placementRow(run, `(b) place, ${MARKETS} markets, ${CONNECTIONS} clients`, run.many);
  const cancel = await cancelRow(run);
  const crossing = await placementRow(run, `(d) crossing-heavy: buys of 1 at 0.45..0.55, ${MARKETS} markets, ${CONNECTIONS} clients`, run.crossMarkets, { clients: crossingFlow(run) });
  const batch = await placementRow(run, `(e) batch placement, ${ORDERS_PER_BATCH} orders per request, ${MARKETS} markets, ${BATCH_CLIENTS} clients`, run.quoteMarkets, { clients: batchFlow(run) });
  const baselines: Row[] = [];
  for (const variant of ['own', 'shared', 'notify'] as const) baselines.push(await baseline(run.database.url, run.database.postmasterPid, variant));
  const signed = await signedRow(run, bearer);
  const inProcess = await inProcessRow(run, `(g) place, ${MARKETS} markets, ${CONNECTIONS} callers in process, no HTTP`, run.directMarkets);
  const targeted = [one, bearer, cancel, crossing, batch, ...baselines, signed.row, inProcess];
  await run.service.stop();
  const rows = [...targeted, ...(await processRows(run, defer))];
  const measure = (performance.now() - measureStarted) / 1000;
  await report(run, rows, { one, bearer, crossing, batch, own: baselines[0]!, inProcess }, { setup, measure });
  reportTargets([
    { ok: one.rate! >= TARGET_ONE_MARKET, text: `one market: ${fmt(one.rate)} placements/s (target >= ${TARGET_ONE_MARKET})` },
    { ok: one.p99! < TARGET_P99_MS, text: `one market: p99 ${fmt(one.p99, 1)} ms (target < ${TARGET_P99_MS} ms)` },
    { ok: bearer.rate! >= TARGET_MANY_MARKETS, text: `${MARKETS} markets: ${fmt(bearer.rate)} placements/s (target >= ${TARGET_MANY_MARKETS})` },
    { ok: bearer.p99! < TARGET_P99_MS, text: `${MARKETS} markets: p99 ${fmt(bearer.p99, 1)} ms (target < ${TARGET_P99_MS} ms)` },
    { ok: signed.share >= TARGET_SIGNED_SHARE, text: `signed placements: ${percent(signed.share)} of the bearer-token rate around them, the median of ${SIGNED_ROUNDS} rounds (${signed.shareList}; target >= ${TARGET_SIGNED_SHARE * 100}%)` },
    { ok: cancel.p50 < TARGET_BATCH_MS, text: `batch cancel of ${BATCH}: p50 ${fmt(cancel.p50, 1)} ms, max ${fmt(cancel.max, 1)} ms (target p50 < ${TARGET_BATCH_MS} ms)` },
    { ok: targeted.every((row) => row.failed === 0), text: `failed requests: ${targeted.reduce((n, row) => n + row.failed, 0)} (target 0)` },
  ]);
});

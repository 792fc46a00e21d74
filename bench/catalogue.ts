/**
 * npm run bench:catalogue [-- --events N] [--q WORD] [--miss WORD] [--typo WORD] [--words 'THREE WORDS'] [--depth ROWS]:
 * the catalogue reads of the real service on a large catalogue, against hand-written baselines.
 *
 * 1. Database: an embedded PostgreSQL under .data/bench-catalogue (git-ignored; kept between runs), one
 *    database per catalogue size, or BENCH_DATABASE_URL. Migrated, and seeded with the scale generator
 *    (100,000 events by default, about 3 markets each, as `npm run seed:scale`) unless it already holds
 *    that catalogue (bench/catalogue-db.ts).
 * 2. The real service, as `npm start` builds it (src/server.ts startService: migrations, services, the app of
 *    src/app.ts), in this process on a free port, on that database; LOG_LEVEL (default info) with its
 *    access log written to /dev/null.
 * 3. Beside it, in this process: a bare Koa answering a constant JSON (the ceiling), and the baselines, one
 *    minimal Koa + pg.Pool handler per endpoint running hand-written SQL that reads what the service reads
 *    for the request (bench/catalogue-baseline.ts). Before measuring, every baseline is checked to answer the
 *    same items, in the same order, as the service.
 * 4. autocannon in a worker thread (so that the servers keep the main thread), BENCH_CONNECTIONS connections
 *    (default 32), BENCH_WARMUP s (default 1) unmeasured then BENCH_DURATION s (default 2) measured per row.
 *    Each endpoint is measured in BENCH_ROUNDS rounds (default 3), a round being the service then its
 *    baseline, so that the two are compared round by round: on a small virtual machine the same code's
 *    requests/s moves by a third from one row to the next (and the first seconds after the service starts
 *    are often slower), which a single pair of rows would take for a difference between them. The
 *    endpoints: /events?limit=20, /events/keyset?limit=20 (first page), /events/keyset 20,000 rows deep
 *    (the cursor found by walking the next_cursor chain with limit=500 first), /events/pagination?limit=20,
 *    /api/events?with_nested_markets=true, then each search (/api/search, /public-search) with q=WORD (default
 *    `price`, which occurs in generated titles), a miss (--miss, default `zqxjv`: a word in no item's text), a
 *    typo (--typo, default `bitcon`: no word starts with it, and it is one edit from a word) and three words
 *    (--words, default `bitcoin price weekly`), each checked against the catalogue before measuring; and the
 *    first market's candlesticks (1-minute over a day, 60-minute over 30 days, 1440-minute over a year) and
 *    order book, that market given a year of minute candles and 500 resting orders first (bench/catalogue-db.ts
 *    seedBusyMarket).
 * 5. Then every endpoint again, one row of BENCH_ROUNDS x BENCH_DURATION s each (not the ceiling nor the
 *    baselines, which do not involve the service), against the service as deployed, `node dist/main.js` in a
 *    process of its own (bench/lib.ts startServiceProcess:
 *    built first if stale, LOG_LEVEL=warn) on the same database, once with WEB_CONCURRENCY=1 and once with
 *    WEB_CONCURRENCY=2, after checking that it answers what the in-process service answered; the service of
 *    step 2 is stopped first. All of them, since they add only two rows per endpoint (a few minutes) to a run
 *    whose first start seeds for several minutes. No target: these rows show, beside the in-process ones,
 *    what a second worker process buys on this machine.
 *
 * Prints requests/s, p50 and p99 latency, the main thread's busy time per request (event-loop utilisation:
 * servers only; autocannon runs in its worker; for the rows of step 5, the CPU time of the service's
 * processes), the cores other processes kept busy meanwhile (bench/cpu-share.ts:
 * on this 2-core machine a row sharing it with other work is not worth comparing; the run says so), statements
 * per request, and each endpoint's share of its baseline's requests/s: the median of the rounds' shares, each
 * printed too (an endpoint's other figures: requests/s the mean of its rounds', p50 and p99 their medians).
 * Targets (exit code 1 when one is missed): each endpoint at least 80% of its baseline's requests/s with p99
 * under 100 ms, but for the misses, whose share is printed without a target; the deep keyset page's p50 at
 * most 1.5 times the first page's; the searches' miss, typo and three-word rows at least 500 requests/s with
 * p99 under 50 ms; the candlesticks' rows p99 under 50 ms. A miss costs its baseline almost nothing but HTTP (one short statement and a look into
 * the in-memory index it shares with the service), so the share of a miss is the service's fixed cost per
 * request (request and trace ids, dispatch, validation, ETag, access log) against a bare handler's; that cost
 * is what bench:dispatch holds to a target of its own, against plain Koa.
 *
 * BENCH_ONLY=TEXT measures only the endpoints whose name contains TEXT (the ceiling row always).
 *
 * BENCH_EXPLAIN=1 also prints, for one request of each endpoint, every statement the service ran with its
 * EXPLAIN ANALYZE execution time (BENCH_EXPLAIN=plans: the whole plans), replayed in one transaction with the
 * session settings the service set before it.
 */
import { AsyncLocalStorage } from 'node:async_hooks';
import { randomUUID } from 'node:crypto';
import type { IncomingMessage } from 'node:http';
import { availableParallelism } from 'node:os';
import { performance } from 'node:perf_hooks';
import { parseArgs } from 'node:util';
import Koa from 'koa';
import pg from 'pg';
import { pino } from 'pino';
import { loadConfig } from '../src/config.js';
import { createLogger } from '../src/logger.js';
import { poolSettings, type Pools } from '../src/db/pools.js';
import { startService, type RunningService } from '../src/server.js';
import { createBaseline, POOL_MAX, SEARCH_POOL_MAX, type Baseline } from './catalogue-baseline.js';
import { prepareDatabase, seedBusyMarket, type BenchDatabase, type BusyMarket } from './catalogue-db.js';
import { startCpuShare } from './cpu-share.js';
import { type AutocannonResult, autocannon, close, listen, median, reportTargets, startServiceProcess, type ServiceProcess } from './lib.js';
import { processesCpu } from './proc.js';

const { values: args } = parseArgs({
  options: {
    events: { type: 'string', default: '100000' },
    q: { type: 'string', default: 'price' },
    miss: { type: 'string', default: 'zqxjv' },
    typo: { type: 'string', default: 'bitcon' },
    words: { type: 'string', default: 'bitcoin price weekly' },
    depth: { type: 'string', default: '20000' },
  },
});
const EVENTS = Number(args.events);
const DEPTH = Number(args.depth);
const WORD = args.q!.trim();
function refuse(message: string): never {
  console.error(`bench:catalogue: ${message}`);
  process.exit(2);
}
if (!Number.isSafeInteger(EVENTS) || EVENTS < 1) refuse('--events must be a positive whole number');
if (!Number.isSafeInteger(DEPTH) || DEPTH < 1) refuse('--depth must be a positive whole number');
const SINGLE_WORD = /^[\p{L}\p{N}]{3,}$/u;
if (!SINGLE_WORD.test(WORD)) refuse('--q must be one word of 3 or more letters or digits');
const MISS = args.miss!.trim();
const TYPO = args.typo!.trim().toLowerCase();
const WORDS = args.words!.trim().split(/\s+/).join(' ');
if (!SINGLE_WORD.test(MISS)) refuse('--miss must be one word of 3 or more letters or digits');
if (!/^[\p{L}]{4,}$/u.test(TYPO)) refuse('--typo must be one word of 4 or more letters');
if (WORDS.split(' ').length !== 3 || !WORDS.split(' ').every((w) => SINGLE_WORD.test(w))) refuse('--words must be three words of 3 or more letters or digits');

const DURATION = Number(process.env.BENCH_DURATION ?? 2);
const WARMUP = Number(process.env.BENCH_WARMUP ?? 1);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 3);
if (!(DURATION > 0) || !(WARMUP >= 0)) refuse('BENCH_DURATION must be a positive number of seconds, BENCH_WARMUP zero or more');
if (!Number.isSafeInteger(ROUNDS) || ROUNDS < 1) refuse('BENCH_ROUNDS must be a positive whole number');
const CONNECTIONS = Number(process.env.BENCH_CONNECTIONS ?? 32);
const EXPLAIN = process.env.BENCH_EXPLAIN ?? '';
const ONLY = process.env.BENCH_ONLY ?? '';
const TARGET_SHARE = 0.8;
const TARGET_P99_MS = 100;
const TARGET_DEEP_P50 = 1.5;
/** Targets of the searches' miss, typo and three-word rows. */
const TARGET_SEARCH_P99_MS = 50;
const TARGET_SEARCH_RPS = 500;
/** Target of the candlesticks' rows, over a year of minute history. */
const TARGET_CANDLES_P99_MS = 50;
/** Other work above this many cores during a row marks the run as disturbed. */
const DISTURBED_CORES = 0.1;
const WALK_PAGE = 500;

const log = (line: string) => console.log(`bench:catalogue: ${line}`);


async function getJson(url: string, headers: Record<string, string> = {}): Promise<any> {
  const response = await fetch(url, { headers });
  const text = await response.text();
  if (response.status !== 200) throw new Error(`GET ${url}: ${response.status} ${text.slice(0, 500)}`);
  return JSON.parse(text);
}

interface Measured {
  result: AutocannonResult;
  /** Main-thread busy time per answered request, µs; for a service process, the CPU time of its processes (NaN without /proc). */
  serverUs: number;
  /** Cores kept busy by other work meanwhile (undefined without /proc). */
  otherCores: number | undefined;
  /** For a service of several workers: the connections each held during the row. */
  spread?: number[];
}

/** The benchmark's PostgreSQL, told apart from other work in the CPU accounting (see cpu-share.ts). */
let postmasterPidFile: string | undefined;

/**
 * One row: WARMUP s unmeasured, then `duration` s measured. `spawned`: the service at `url` is that process
 * (and its workers), whose CPU time is the server's.
 */
async function load(url: string, spawned?: ServiceProcess, duration = DURATION): Promise<Measured> {
  const options = { url, connections: CONNECTIONS, workers: 1 };
  if (WARMUP > 0) await autocannon({ ...options, duration: WARMUP });
  const before = performance.eventLoopUtilization();
  const cpu = startCpuShare(postmasterPidFile);
  const spawnedCpu0 = spawned && processesCpu(spawned.pids());
  const started = performance.now();
  const running = Promise.resolve(autocannon({ ...options, duration }));
  // Which worker holds autocannon's connections: the fullest of samples taken every 250 ms (they open once
  // its worker thread is up).
  let spread: number[] | undefined;
  let finished = false;
  void running.finally(() => (finished = true)).catch(() => {});
  while (spawned && spawned.workers > 1 && !finished) {
    await new Promise((resolve) => setTimeout(resolve, 250));
    const held = spawned.connections();
    const sampled = held && [...held.values()];
    const total = (counts: number[] | undefined) => (counts ?? []).reduce((a, b) => a + b, 0);
    if (sampled && total(sampled) > total(spread)) spread = sampled;
  }
  const result = await running;
  const spawnedCpu1 = spawned && processesCpu(spawned.pids());
  const seconds = (performance.now() - started) / 1000;
  const share = cpu?.();
  const busy = performance.eventLoopUtilization(before);
  if (result.errors > 0 || result.timeouts > 0 || result.non2xx > 0 || result.requests.total === 0) {
    throw new Error(`${url}: ${result.errors} errors, ${result.timeouts} timeouts, status codes ${JSON.stringify(result.statusCodeStats)}`);
  }
  if (!spawned) return { result, serverUs: (busy.active * 1000) / result.requests.total, otherCores: share?.otherCores };
  // The service's processes are neither this process nor PostgreSQL: cpu-share counts them as others.
  const spawnedMs = spawnedCpu0 && spawnedCpu1 ? spawnedCpu1.user + spawnedCpu1.sys - spawnedCpu0.user - spawnedCpu0.sys : undefined;
  return {
    result,
    serverUs: spawnedMs === undefined ? NaN : (spawnedMs * 1000) / result.requests.total,
    otherCores: share && spawnedMs !== undefined ? Math.max(0, share.otherCores - spawnedMs / 1000 / seconds) : undefined,
    spread,
  };
}

interface Endpoint {
  name: string;
  /** Path and query on the service. */
  service: string;
  /** Path and query on the baseline app. */
  baseline: string;
  /** What must agree between the two answers: the items in order (and counts). */
  serviceKey(body: any): unknown;
  baselineKey(body: any): unknown;
  /** Held to the searches' own targets (TARGET_SEARCH_P99_MS, TARGET_SEARCH_RPS) too. */
  searchTarget?: boolean;
  /** Its share of the baseline's requests/s printed, but not held to TARGET_SHARE (the misses: see the top). */
  shareWithoutTarget?: boolean;
  /** Held to TARGET_CANDLES_P99_MS too (the candlesticks). */
  candlesTarget?: boolean;
}

const ids = (rows: Array<{ id: unknown }>) => rows.map((row) => String(row.id));

/**
 * The busy market's candlesticks over the windows a chart shows (a day of minutes, 30 days of hours, a year of
 * days, each ending where its history ends), and its order book.
 */
function marketEndpoints(busy: BusyMarket): Endpoint[] {
  const windows = [
    { period: 1, days: 1, what: 'a day' },
    { period: 60, days: 30, what: '30 days' },
    { period: 1440, days: 365, what: 'a year' },
  ];
  const candles = windows.map(({ period, days, what }): Endpoint => {
    const seconds = period * 60;
    const start = busy.end - days * 86_400;
    // The rows the service sums: those starting in the first period ending at or after start, up to the last ending by end.
    const from = Math.ceil(start / seconds) * seconds - seconds;
    const to = Math.floor(busy.end / seconds) * seconds;
    return {
      name: `GET /api/series/{s}/markets/{t}/candlesticks (busy market, ${period}-minute, ${what})`,
      service: `/api/series/${busy.series}/markets/${busy.ticker}/candlesticks?start_ts=${start}&end_ts=${busy.end}&period_interval=${period}`,
      baseline: `/candles?market=${busy.id}&source=${period}&seconds=${seconds}&from=${from}&to=${to}`,
      serviceKey: (body) => body.candlesticks.map((c: any) => [c.end_period_ts, c.price.close_dollars ?? null]),
      baselineKey: (body) => body.map((r: any) => [Number(r.end), r.close]),
      candlesTarget: true,
    };
  });
  return [
    ...candles,
    {
      name: 'GET /api/markets/{ticker}/orderbook (busy market, 500 orders)',
      service: `/api/markets/${busy.ticker}/orderbook`,
      baseline: `/orderbook?market=${busy.id}`,
      serviceKey: (body) => [body.orderbook.yes.length, body.orderbook.no.length],
      baselineKey: (body) => [body.filter((r: any) => r.book_side === 'bid').length, body.filter((r: any) => r.book_side === 'ask').length],
    },
  ];
}

function endpoints(deep: { cursor: string; afterId: string; depth: number }, busy: BusyMarket): Endpoint[] {
  return [
    {
      name: 'GET /events?limit=20',
      service: '/events?limit=20',
      baseline: '/events?limit=20',
      serviceKey: (body) => ids(body),
      baselineKey: (body) => ids(body),
    },
    {
      name: 'GET /events/keyset?limit=20 (first page)',
      service: '/events/keyset?limit=20',
      baseline: '/events/keyset?limit=20',
      serviceKey: (body) => [ids(body.events), body.next_cursor !== null],
      baselineKey: (body) => [ids(body.events), body.next_cursor !== null],
    },
    {
      name: `GET /events/keyset?limit=20 (${deep.depth.toLocaleString('en')} deep)`,
      service: `/events/keyset?limit=20&after_cursor=${encodeURIComponent(deep.cursor)}`,
      baseline: `/events/keyset?limit=20&after=${deep.afterId}`,
      serviceKey: (body) => [ids(body.events), body.next_cursor !== null],
      baselineKey: (body) => [ids(body.events), body.next_cursor !== null],
    },
    {
      name: 'GET /events/pagination?limit=20',
      service: '/events/pagination?limit=20',
      baseline: '/events/pagination?limit=20',
      serviceKey: (body) => [ids(body.data), body.pagination],
      baselineKey: (body) => [ids(body.data), body.pagination],
    },
    {
      name: 'GET /api/events?with_nested_markets=true',
      service: '/api/events?with_nested_markets=true',
      baseline: '/api/events?with_nested_markets=true',
      serviceKey: (body) => [body.events.map((e: any) => [e.id, ids(e.markets)]), body.cursor !== null],
      baselineKey: (body) => [body.events.map((e: any) => [String(e.id), ids(e.markets)]), body.cursor !== null],
    },
    ...[
      { q: WORD, searchTarget: false },
      { q: MISS, searchTarget: true, shareWithoutTarget: true, what: 'miss' },
      { q: TYPO, searchTarget: true, what: 'typo' },
      { q: WORDS, searchTarget: true, what: 'three words' },
    ].flatMap(({ q, searchTarget, shareWithoutTarget, what }) => {
      const query = encodeURIComponent(q);
      const label = `q=${q}${what ? ` (${what})` : ''}`;
      return [
        {
          name: `GET /api/search?${label}`,
          service: `/api/search?q=${query}`,
          baseline: `/api/search?q=${query}`,
          serviceKey: (body: any) => body.results.map((r: any) => `${r.kind}:${r.id}`),
          baselineKey: (body: any) => body.results.map((r: any) => `${r.kind}:${r.id}`),
          searchTarget,
          shareWithoutTarget,
        },
        {
          name: `GET /public-search?${label}`,
          service: `/public-search?q=${query}`,
          baseline: `/public-search?q=${query}`,
          serviceKey: (body: any) => [ids(body.events), ids(body.tags), ids(body.profiles), body.pagination],
          baselineKey: (body: any) => [ids(body.events), ids(body.tags), ids(body.profiles), body.pagination],
          searchTarget,
          shareWithoutTarget,
        },
      ];
    }),
    ...marketEndpoints(busy),
  ];
}

/** Walks the keyset chain with limit=500 to the page `depth` rows deep: its cursor and the id before it. */
async function walkKeyset(serviceUrl: string, depth: number): Promise<{ cursor: string; afterId: string; depth: number }> {
  let cursor: string | undefined;
  let afterId = '0';
  let walked = 0;
  while (walked < depth) {
    const limit = Math.min(WALK_PAGE, depth - walked);
    const body = await getJson(`${serviceUrl}/events/keyset?limit=${limit}${cursor ? `&after_cursor=${encodeURIComponent(cursor)}` : ''}`);
    // The last page: stay on the previous one, so that the deep page has rows.
    if (body.next_cursor === null) break;
    walked += body.events.length;
    cursor = body.next_cursor;
    afterId = String(body.events.at(-1).id);
  }
  if (!cursor) throw new Error('the keyset list has a single page: seed more events');
  return { cursor, afterId, depth: walked };
}

interface Captured {
  sql: string;
  bindings: unknown[];
  /** A named statement: prepared once per connection. */
  name: string | undefined;
  /** The session settings of the pool it ran on (src/db/pools.ts). */
  settings: Readonly<Record<string, string>>;
}

const captureContext = new AsyncLocalStorage<string>();

/**
 * The statements the service runs for one request (knex's query events, BEGIN/SET/COMMIT included), and only
 * that request's: the request carries a marker header, and a listener placed before the app's on the server
 * enters an async context for it, which the query events are checked against. Whatever else runs meanwhile
 * (the trading expiry sweep, say) is left out.
 */
async function captureStatements(service: RunningService, url: string): Promise<Captured[]> {
  const captured: Captured[] = [];
  const token = randomUUID();
  const mark = (request: IncomingMessage) => {
    if (request.headers['x-bench-capture'] === token) captureContext.enterWith(token);
  };
  // A NamedStatement (src/db/knex.ts) hands its values to the driver in the options, not as Knex's bindings.
  type Query = { sql: string; bindings?: unknown[]; options?: { name?: string; values?: unknown[] } };
  const listenerOf = (settings: Captured['settings']) => (data: Query) => {
    const bindings = data.options?.values ?? data.bindings ?? [];
    if (captureContext.getStore() === token) captured.push({ sql: data.sql, bindings, name: data.options?.name, settings });
  };
  const pools = (Object.keys(service.pools) as Array<keyof Pools>).map((name) => ({ db: service.pools[name], listener: listenerOf(poolSettings(name)) }));
  service.server.prependListener('request', mark);
  for (const { db, listener } of pools) db.on('query', listener);
  try {
    await getJson(url, { 'x-bench-capture': token });
  } finally {
    for (const { db, listener } of pools) db.removeListener('query', listener);
    service.server.removeListener('request', mark);
    // An enabled AsyncLocalStorage makes every promise of the process pay for its hooks (several percent of
    // a request's time, the service's more than a baseline's): off before anything is measured.
    captureContext.disable();
  }
  if (captured.length === 0) throw new Error(`GET ${url}: no statement was captured`);
  return captured;
}

/** Replays the statements of a request in one rolled-back transaction, EXPLAIN ANALYZE on each read. */
async function explain(databaseUrl: string, service: RunningService, name: string, statements: Captured[]): Promise<void> {
  const client = new pg.Client({ connectionString: databaseUrl });
  await client.connect();
  console.log(`\n--- ${name}: ${statements.length} statements`);
  try {
    await client.query('begin');
    for (const { sql, bindings, name: statementName, settings } of statements) {
      const text = service.db.client.positionBindings(sql) as string;
      const values = service.db.client.prepBindings(bindings) as unknown[];
      const oneLine = text.replace(/\s+/g, ' ').trim();
      if (/^(begin|commit|rollback)\b/i.test(oneLine)) {
        console.log(`  ${oneLine}`);
        continue;
      }
      if (/^set\b/i.test(oneLine)) {
        await client.query(text, values);
        console.log(`  ${oneLine}`);
        continue;
      }
      // The settings of its pool, for this statement only.
      for (const [setting, value] of Object.entries(settings)) await client.query(`select set_config($1, $2, true)`, [setting, value]);
      // Twice: the first run warms this connection's catalogue caches (the service's pooled connections have
      // them), so that the second shows the planning time a request really pays.
      await client.query(`explain (analyze) ${text}`, values);
      const { rows } = await client.query(`explain (analyze, buffers) ${text}`, values);
      for (const setting of Object.keys(settings)) await client.query(`set local ${setting} to default`);
      const plan = (rows as Array<Record<string, string>>).map((row) => row['QUERY PLAN']!);
      const time = (label: string) => plan.find((line) => line.startsWith(label))?.replace(/^.*: /, '') ?? '?';
      // A named statement is planned once per connection: its requests pay the execution only.
      const planning = statementName ? `planned once (named ${statementName})` : `planning ${time('Planning Time')}`;
      console.log(
        `  [${planning}, execution ${time('Execution Time')}${Object.entries(settings).filter(([setting]) => !(setting in poolSettings('db'))).map(([setting, value]) => `, ${setting} ${value}`).join('')}] ${oneLine.slice(0, 300)}${oneLine.length > 300 ? ' ...' : ''}  ${JSON.stringify(values).slice(0, 300)}`,
      );
      if (EXPLAIN === 'plans') console.log(plan.map((line: string) => `      ${line}`).join('\n'));
    }
  } finally {
    await client.query('rollback').catch(() => {});
    await client.end();
  }
}

/** What the table prints of one or more measurements of a row. */
interface Figures {
  rps: number;
  p50: number;
  p99: number;
  serverUs: number;
  kbPerResponse: number;
  otherCores: number | undefined;
}

/**
 * The measurements of one row taken in several rounds, as one: requests/s the mean of the rounds', p50 and
 * p99 their medians, µs per request over all of them, other work the busiest round's.
 */
function figuresOf(measurements: readonly Measured[]): Figures {
  const requests = measurements.reduce((sum, m) => sum + m.result.requests.total, 0);
  const others = measurements.map((m) => m.otherCores);
  return {
    rps: measurements.reduce((sum, m) => sum + m.result.requests.average, 0) / measurements.length,
    p50: median(measurements.map((m) => m.result.latency.p50)),
    p99: median(measurements.map((m) => m.result.latency.p99)),
    serverUs: measurements.reduce((sum, m) => sum + m.serverUs * m.result.requests.total, 0) / requests,
    kbPerResponse: measurements.reduce((sum, m) => sum + m.result.throughput.total, 0) / requests / 1024,
    otherCores: others.some((cores) => cores === undefined) ? undefined : Math.max(...(others as number[])),
  };
}

/** An endpoint measured in ROUNDS rounds, each the service then its baseline. */
interface Row {
  name: string;
  searchTarget?: boolean;
  candlesTarget?: boolean;
  shareWithoutTarget?: boolean;
  statements: number;
  rounds: Array<{ service: Measured; baseline: Measured }>;
  service: Figures;
  baseline: Figures;
  /** Each round's service req/s over its baseline's, in round order. */
  shares: number[];
  /** Their median: what the target is checked on. */
  share: number;
}

function rowOf({ name, searchTarget, shareWithoutTarget, candlesTarget }: Endpoint, statements: number, rounds: Row['rounds']): Row {
  const shares = rounds.map((round) => round.service.result.requests.average / round.baseline.result.requests.average);
  return {
    name,
    searchTarget,
    candlesTarget,
    shareWithoutTarget,
    statements,
    rounds,
    service: figuresOf(rounds.map((round) => round.service)),
    baseline: figuresOf(rounds.map((round) => round.baseline)),
    shares,
    share: median(shares),
  };
}

/** An endpoint measured on `node dist/main.js` with this many workers. */
interface ProcessRow {
  name: string;
  workers: number;
  measured: Measured;
}

const processLabel = (workers: number) => `node dist/main.js WEB_CONCURRENCY=${workers}`;
const percent = (share: number) => `${(share * 100).toFixed(0)}%`;

function printTable(rows: Row[], ceiling: Measured, processRows: ProcessRow[]): void {
  const lines: string[][] = [];
  lines.push(['row', 'req/s', 'p50 ms', 'p99 ms', 'srv µs/req', 'KB/resp', 'others', 'stmts', '% baseline', 'rounds']);
  lines.push(['bare Koa, constant JSON (ceiling)', ...numbers(figuresOf([ceiling])), '-', '-', '']);
  for (const row of rows) {
    lines.push([`service   ${row.name}`, ...numbers(row.service), String(row.statements), percent(row.share), row.shares.map(percent).join(' ')]);
    lines.push([`  baseline (Koa + pg, 1 statement)`, ...numbers(row.baseline), '1', '', '']);
  }
  for (const row of processRows) {
    const baseline = rows.find((r) => r.name === row.name)?.baseline;
    const figures = figuresOf([row.measured]);
    lines.push([`service   ${row.name}, ${processLabel(row.workers)}`, ...numbers(figures), '-', baseline ? percent(figures.rps / baseline.rps) : '-', '']);
  }
  const widths = lines[0]!.map((_, i) => Math.max(...lines.map((line) => line[i]!.length)));
  const format = (line: string[]) => line.map((cell, i) => (i === 0 ? cell.padEnd(widths[i]!) : cell.padStart(widths[i]!))).join('  ');
  console.log(format(lines[0]!));
  console.log('-'.repeat(widths.reduce((a, b) => a + b + 2, -2)));
  for (const line of lines.slice(1)) console.log(format(line).trimEnd());
}

function numbers({ rps, p50, p99, serverUs, kbPerResponse, otherCores }: Figures): string[] {
  return [
    rps.toFixed(0),
    String(p50),
    String(p99),
    Number.isFinite(serverUs) ? serverUs.toFixed(0) : '?',
    kbPerResponse.toFixed(1),
    otherCores === undefined ? '?' : otherCores.toFixed(2),
  ];
}

async function main(): Promise<void> {
  const cleanups: Array<() => Promise<void>> = [];
  const cleanup = async () => {
    for (const step of cleanups.reverse()) await step().catch((error: unknown) => console.error('bench:catalogue: cleanup:', error));
    cleanups.length = 0;
  };
  process.once('SIGINT', () => {
    void cleanup().finally(() => process.exit(130));
  });
  // Refused before anything starts (an exit later would leave the embedded PostgreSQL running).
  if (!endpoints({ cursor: '', afterId: '0', depth: DEPTH }, { id: '0', ticker: '', series: '', end: 0 }).some((endpoint) => endpoint.name.includes(ONLY))) refuse(`BENCH_ONLY='${ONLY}' names no endpoint`);
  try {
    const started = performance.now();
    const database: BenchDatabase = await prepareDatabase({ events: EVENTS, log });
    cleanups.push(() => database.stop());
    postmasterPidFile = database.postmasterPidFile;
    const busy = await seedBusyMarket(database.url, log);

    const logLevel = process.env.LOG_LEVEL ?? 'info';
    // All the load comes from one address: the per-client request budgets would refuse it.
    const config = loadConfig({ PORT: '0', HOST: '127.0.0.1', DATABASE_URL: database.url, SEED: 'none', LOG_LEVEL: logLevel, RATE_LIMITS: 'off' });
    const service = await startService(config, createLogger(config.logLevel, pino.destination({ dest: '/dev/null', sync: true })));
    cleanups.push(() => service.stop());
    // Measured once ready, as a load balancer would send it traffic: its search index read whole.
    await service.ready;

    const ceilingApp = new Koa();
    ceilingApp.use((ctx) => {
      ctx.body = { id: 'list', ok: true };
    });
    const ceiling = await listen(ceilingApp);
    cleanups.push(() => close(ceiling.server));
    const baselineApp: Baseline = createBaseline(database.url, service.services.searchIndex);
    cleanups.push(() => baselineApp.close());
    const baseline = await listen(baselineApp.app);
    cleanups.push(() => close(baseline.server));

    const facts = new pg.Client({ connectionString: database.url });
    await facts.connect();
    const counts = (
      await facts.query(
        `select (select count(*)::int from events) as events, (select count(*)::int from markets) as markets,
                (select count(*)::int from events where status = 'ACTIVE') as active,
                (select count(*)::int from events where lower(title) like $1) as with_word,
                current_setting('server_version') as version`,
        [`%${WORD.toLowerCase()}%`],
      )
    ).rows[0];
    // Whether a word of some item's searchable text begins with the typo (fields and words separated by spaces).
    const typoPrefixes = (await facts.query(`select count(*)::int as n from (select 1 from events where (' ' || search_text) like $1 union all select 1 from markets where (' ' || search_text) like $1 limit 1) x`, [`% ${TYPO}%`])).rows[0].n;
    await facts.end();
    if (counts.with_word === 0) throw new Error(`no event title contains '${WORD}': choose another --q`);
    if (typoPrefixes > 0) throw new Error(`'${TYPO}' begins a word of the catalogue, so it is no typo: choose another --typo`);
    const found = async (q: string) => (await getJson(`${service.url}/api/search?q=${encodeURIComponent(q)}`)).results.length as number;
    if ((await found(MISS)) > 0) throw new Error(`'${MISS}' finds items: choose another --miss`);
    if ((await found(TYPO)) === 0) throw new Error(`'${TYPO}' finds nothing: choose another --typo`);
    if ((await found(WORDS)) === 0) throw new Error(`'${WORDS}' finds nothing: choose other --words`);

    log(`walking /events/keyset with limit=${WALK_PAGE} to ${DEPTH.toLocaleString('en')} rows deep`);
    const deep = await walkKeyset(service.url, DEPTH);
    if (deep.depth < DEPTH) log(`only ${deep.depth} ACTIVE events before the last page: the deep page is ${deep.depth} rows deep`);

    const list = endpoints(deep, busy).filter((endpoint) => endpoint.name.includes(ONLY));
    const statements = new Map<string, Captured[]>();
    /** What the service answered each endpoint (the items in order), which the service processes must answer too. */
    const answers = new Map<string, string>();
    for (const endpoint of list) {
      const [serviceBody, baselineBody] = await Promise.all([getJson(`${service.url}${endpoint.service}`), getJson(`${baseline.url}${endpoint.baseline}`)]);
      const expected = JSON.stringify(endpoint.serviceKey(serviceBody));
      const actual = JSON.stringify(endpoint.baselineKey(baselineBody));
      if (expected !== actual) throw new Error(`${endpoint.name}: the baseline does not answer what the service answers:\n  service  ${expected}\n  baseline ${actual}`);
      answers.set(endpoint.name, expected);
      statements.set(endpoint.name, await captureStatements(service, `${service.url}${endpoint.service}`));
    }
    if (EXPLAIN) {
      for (const endpoint of list) await explain(database.url, service, endpoint.name, statements.get(endpoint.name)!);
      console.log('');
    }
    const setupSeconds = (performance.now() - started) / 1000;

    log(`measuring the ceiling and ${list.length} endpoint(s), each in ${ROUNDS} round(s) of the service then its baseline, ${WARMUP} s + ${DURATION} s each`);
    const measureStarted = performance.now();
    const ceilingResult = await load(`${ceiling.url}/`);
    const rows: Row[] = [];
    for (const endpoint of list) {
      const rounds: Row['rounds'] = [];
      for (let round = 0; round < ROUNDS; round++) {
        const measured = { service: await load(`${service.url}${endpoint.service}`), baseline: await load(`${baseline.url}${endpoint.baseline}`) };
        rounds.push(measured);
        const brief = ({ result, serverUs }: Measured) => `${result.requests.average.toFixed(0)} req/s, p99 ${result.latency.p99} ms (${serverUs.toFixed(0)} µs/req)`;
        log(`${endpoint.name}, round ${round + 1}: service ${brief(measured.service)}, baseline ${brief(measured.baseline)}`);
      }
      rows.push(rowOf(endpoint, statements.get(endpoint.name)!.length, rounds));
    }

    // The endpoints again on the service as deployed, a process of its own: WEB_CONCURRENCY=1, then 2. The
    // service of this process is stopped first, so that its background work stays out of these rows.
    await service.stop();
    const processRows: ProcessRow[] = [];
    for (const workers of [1, 2]) {
      log(`starting ${processLabel(workers)} on the same database; measuring ${list.length} rows of ${WARMUP} s + ${ROUNDS * DURATION} s`);
      const spawned = await startServiceProcess({ databaseUrl: database.url, workers });
      const stopSpawned = () => spawned.stop();
      cleanups.push(stopSpawned);
      for (const endpoint of list) {
        const answer = JSON.stringify(endpoint.serviceKey(await getJson(`${spawned.url}${endpoint.service}`)));
        if (answer !== answers.get(endpoint.name)) {
          throw new Error(`${endpoint.name}: ${processLabel(workers)} does not answer what the service answered:\n  service  ${answers.get(endpoint.name)}\n  process  ${answer}`);
        }
      }
      for (const endpoint of list) processRows.push({ name: endpoint.name, workers, measured: await load(`${spawned.url}${endpoint.service}`, spawned, ROUNDS * DURATION) });
      await spawned.stop();
      cleanups.splice(cleanups.indexOf(stopSpawned), 1);
    }
    // Side by side: each endpoint with 1 worker process, then 2.
    processRows.sort((a, b) => list.findIndex((e) => e.name === a.name) - list.findIndex((e) => e.name === b.name) || a.workers - b.workers);
    const measureSeconds = (performance.now() - measureStarted) / 1000;
    const disturbed = [ceilingResult, ...rows.flatMap((row) => row.rounds.flatMap((round) => [round.service, round.baseline])), ...processRows.map((row) => row.measured)].filter(
      (m) => (m.otherCores ?? 0) > DISTURBED_CORES,
    ).length;

    console.log(
      `\ncatalogue benchmark: ${counts.events.toLocaleString('en')} events (${counts.active.toLocaleString('en')} ACTIVE, ` +
        `${counts.with_word.toLocaleString('en')} with '${WORD}' in the title), ${counts.markets.toLocaleString('en')} markets; ` +
        `PostgreSQL ${counts.version}${process.env.BENCH_DATABASE_URL ? ' (BENCH_DATABASE_URL)' : ' (embedded)'}; Node ${process.version}`,
    );
    console.log(
      `${CONNECTIONS} connections; each endpoint in ${ROUNDS} round(s) of the service then its baseline, ${DURATION} s each after ${WARMUP} s warm-up; autocannon in a worker thread; ` +
        `service log level ${logLevel} (to /dev/null); pools of ${POOL_MAX} connections (each search: ${SEARCH_POOL_MAX})\n`,
    );
    printTable(rows, ceilingResult, processRows);
    console.log(
      '\nsrv µs/req: main-thread busy time per answered request (every server runs in this thread, autocannon in a worker);\n' +
        'KB/resp: bytes of one response, headers included;\n' +
        `others: cores (of ${availableParallelism()}) kept busy by other processes during the row` +
        `${database.postmasterPidFile ? '' : ' (the external PostgreSQL counts among them)'};\n` +
        'stmts: SQL statements per request (BEGIN, SET and COMMIT included); % baseline: the endpoint\'s req/s over its baseline\'s.\n' +
        `Rows "${processLabel(1)}" and "=2": the service as deployed, a process of its own on the same database (LOG_LEVEL=warn, so\n` +
        'no access log; with 2, a primary and 2 HTTP workers on one port, each with its own pools), the service of this process stopped;\n' +
        'their srv µs/req is the CPU time (user + system, from /proc) of all the service\'s processes per answered request, and\n' +
        'their others leave those processes out; % baseline: over the same in-process baseline as above; no target on these rows.',
    );
    const spreads = processRows.filter((row) => row.measured.spread);
    if (spreads.length > 0) {
      console.log(`connections held by each worker during the row (${processLabel(2)}): ${spreads.map((row) => `${row.name} ${row.measured.spread!.join('/')}`).join('; ')}`);
    }
    console.log(
      `\nsetup ${setupSeconds.toFixed(0)} s (${database.seeded ? `seeded in ${database.seeded.seconds.toFixed(0)} s` : 'catalogue reused'}), ` +
        `measuring ${measureSeconds.toFixed(0)} s`,
    );
    if (disturbed > 0) console.log(`WARNING: other work took more than ${DISTURBED_CORES} core during ${disturbed} row(s): measure again on a quiet machine`);

    const verdicts: Array<{ ok: boolean; text: string }> = [];
    for (const row of rows) {
      const { p99, rps } = row.service;
      if (!row.shareWithoutTarget) {
        const rounds = ROUNDS > 1 ? `, median of ${row.shares.map(percent).join(', ')}` : '';
        verdicts.push({ ok: row.share >= TARGET_SHARE, text: `${row.name}: ${percent(row.share)} of its baseline's req/s${rounds} (target >= ${TARGET_SHARE * 100}%)` });
      }
      verdicts.push({ ok: p99 < TARGET_P99_MS, text: `${row.name}: p99 ${p99} ms (target < ${TARGET_P99_MS} ms)` });
      if (row.candlesTarget) verdicts.push({ ok: p99 < TARGET_CANDLES_P99_MS, text: `${row.name}: p99 ${p99} ms (target < ${TARGET_CANDLES_P99_MS} ms)` });
      if (row.searchTarget) {
        verdicts.push({ ok: rps >= TARGET_SEARCH_RPS, text: `${row.name}: ${rps.toFixed(0)} req/s (target >= ${TARGET_SEARCH_RPS})` });
        verdicts.push({ ok: p99 < TARGET_SEARCH_P99_MS, text: `${row.name}: p99 ${p99} ms (target < ${TARGET_SEARCH_P99_MS} ms)` });
      }
    }
    const first = rows.find((row) => row.name.includes('(first page)'));
    const deepRow = rows.find((row) => row.name.includes(' deep)'));
    if (first && deepRow) {
      const ratio = deepRow.service.p50 / first.service.p50;
      verdicts.push({
        ok: ratio <= TARGET_DEEP_P50,
        text: `keyset ${deep.depth.toLocaleString('en')} deep: p50 ${deepRow.service.p50} ms = ${ratio.toFixed(2)}x the first page's ${first.service.p50} ms (target <= ${TARGET_DEEP_P50}x)`,
      });
    }
    reportTargets(verdicts);
  } finally {
    await cleanup();
  }
}

main().catch((error: unknown) => {
  console.error('bench:catalogue failed:', error);
  process.exit(1);
});

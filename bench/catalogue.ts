/**
 * npm run bench:catalogue: the catalogue reads of the real service on a large catalogue, against bare
 * baselines (docs/performance.md).
 *
 * The bench's database (kept between runs, one per catalogue size) is migrated and seeded with the scale
 * generator (BENCH_EVENTS events, as `npm run seed:scale`) unless it holds that catalogue already. The service
 * runs in this process (bench/lib.ts startInProcess), measured once ready; beside it a bare Koa answering a
 * constant JSON (the ceiling) and the baselines (bench/catalogue-baseline.ts), each checked to answer the same
 * items in the same order as the service. autocannon, in a worker thread, loads each row with 32 connections,
 * 1 s unmeasured then BENCH_DURATION s (default 2) measured. Each endpoint is measured in 3 rounds, the
 * service then its baseline, compared round by round: on a small virtual machine the same code's requests/s
 * moves by a third from one row to the next. The endpoints: /events?limit=20, /events/keyset?limit=20 (first
 * page, and 20,000 rows deep, or as deep as the catalogue goes: the cursor found by walking the chain with
 * limit=500), /events/pagination?limit=20, /api/events?with_nested_markets=true, then each search
 * (/api/search, /public-search) with a word of generated titles, a miss (a word in no item's text), a typo (no
 * word starts with it, one edit from a word) and three words, each checked against the catalogue first; then a
 * busy market's (bench/catalogue-market.ts: a year of minute candles, 500 resting orders) candlesticks, 1-minute
 * over a day, 60-minute over 30 days, 1440-minute over a year (1,440, 720 and 365 candles), and its order book
 * in both shapes. Each candlesticks row is measured once more at 1 connection, back to back: a chart's traffic
 * at its busiest (at 32 connections a day of minutes queues 32 deep behind the one event loop, whatever the
 * code: docs/performance.md, "Price history"). Then every endpoint again, one row of 3 x BENCH_DURATION s,
 * against `node dist/main.js` (bench/lib.ts startServiceProcess) with WEB_CONCURRENCY=1 and 2, the in-process
 * service stopped first; no target there.
 *
 * Targets (exit code 1 when one is missed): each catalogue read at least 80% of its baseline's requests/s
 * (the median of the rounds' shares) with p99 under 100 ms, but for the misses, whose share is printed without
 * a target; the deep keyset page's p50 at most 1.5 times the first page's; the searches' miss, typo and
 * three-word rows at least 500 requests/s with p99 under 50 ms. The busy market's rows are held to their own
 * target only: the candlesticks' p99 under 50 ms at 1 connection (the verdict shows their p99 at 32 beside
 * it); the books' figures are printed with none. A miss costs its baseline almost nothing but
 * HTTP, so its share is the service's fixed cost per request (ids, dispatch, validation, ETag, access log)
 * against a bare handler's, which bench:dispatch holds to a target of its own.
 */
import { AsyncLocalStorage } from 'node:async_hooks';
import { randomUUID } from 'node:crypto';
import type { IncomingMessage } from 'node:http';
import { availableParallelism } from 'node:os';
import { performance } from 'node:perf_hooks';
import Koa from 'koa';
import pg from 'pg';
import { createDb, type Db } from '../src/db/knex.js';
import { migrateLatest } from '../src/db/migrate.js';
import { generateCatalogue } from '../src/db/seed/generator.js';
import type { RunningService } from '../src/server.js';
import { createBaseline, POOL_MAX } from './catalogue-baseline.js';
import { type Body, type BusyMarket, type Endpoint, marketEndpoints, prepareBusyMarket } from './catalogue-market.js';
import {
  autocannon, type BenchDatabase, benchDatabase, durationSetting, fetchText, figuresOf, listen, type Measured as LibMeasured, percent, printTable,
  processLabel, refuse, reportTargets, runBench, sharesOf, startInProcess, startServiceProcess, type ServiceProcess,
} from './lib.js';
import { processesCpu, startCpuShare } from './proc.js';

/** BENCH_EVENTS: the catalogue's size. */
const EVENTS = Number(process.env.BENCH_EVENTS?.trim() || 100_000);
if (!Number.isSafeInteger(EVENTS) || EVENTS < 1) refuse(`BENCH_EVENTS must be a positive whole number, got '${process.env.BENCH_EVENTS}'`);
const DURATION = durationSetting(2);
const WARMUP = 1;
const ROUNDS = 3;
const CONNECTIONS = 32;
const DEPTH = 20_000;
const WORD = 'price';
const MISS = 'zqxjv';
const TYPO = 'bitcon';
const WORDS = 'bitcoin price weekly';
const TARGET_SHARE = 0.8;
const TARGET_P99_MS = 100;
const TARGET_DEEP_P50 = 1.5;
/** Targets of the searches' miss, typo and three-word rows. */
const TARGET_SEARCH_P99_MS = 50;
const TARGET_SEARCH_RPS = 500;
/** Target of the busy market's candlesticks rows, at a chart's concurrency (see the top). */
const TARGET_CANDLES_P99_MS = 50;
const CHART_CONNECTIONS = 1;
/** Other work above this many cores during a row marks the run as disturbed. */
const DISTURBED_CORES = 0.1;
const WALK_PAGE = 500;
/** The same generator options as `npm run seed:scale`: about 3 markets per event, 50 events per series. */
const GENERATOR = { eventsPerSeries: 50, marketsPerEvent: 3, creatorIds: [] as string[] };

const log = (line: string) => console.log(`bench:catalogue: ${line}`);

const getJson = async (url: string, headers?: Record<string, string>) => JSON.parse(await fetchText(url, { headers }, 200)) as Body;

/** Migrates the bench's database and seeds it with the scale generator when it holds no catalogue; answers the seeding's seconds. */
async function prepareCatalogue(database: BenchDatabase): Promise<number | undefined> {
  const db = createDb(database.url, 4);
  try {
    const migrations = await migrateLatest(db);
    if (migrations.length > 0) log(`migrations applied: ${migrations.join(', ')}`);
    const found = Number((await db.raw<{ rows: Array<{ n: number }> }>('select count(*)::int as n from events')).rows[0]!.n);
    if (found === 0) {
      log(`seeding ${EVENTS} events (about ${EVENTS * GENERATOR.marketsPerEvent} markets); this takes a while once`);
      const started = Date.now();
      const counts = await generateCatalogue(db, { events: EVENTS, ...GENERATOR });
      // Not only statistics: rows just loaded have no hint bits and their pages are not marked all-visible, so
      // the first reads of every page would write it. VACUUM does that once, so that the run that seeds
      // measures what later runs measure.
      await db.raw('vacuum (analyze)');
      const seconds = (Date.now() - started) / 1000;
      log(`seeded ${counts.series} series, ${counts.events} events, ${counts.markets} markets in ${seconds.toFixed(1)} s`);
      return seconds;
    }
    if (found !== EVENTS) throw new Error(`the database holds ${found} events, not ${EVENTS}: point BENCH_DATABASE_URL at an empty database or one seeded at this size`);
    // New indexes (a migration applied just now) need fresh statistics for their expressions.
    if (migrations.length > 0) await db.raw('analyze');
    log(`reusing the seeded catalogue of ${found} events`);
  } finally {
    await db.destroy();
  }
}

/** serverUs: main-thread busy time per answered request (a service process: its processes' CPU time); spread: the connections each worker held. */
type Measured = LibMeasured & { spread?: number[] };

/** The benchmark's PostgreSQL, told apart from other work in the CPU accounting (bench/proc.ts startCpuShare). */
let postmasterPid: number | undefined;

/** One row: WARMUP s unmeasured, then `duration` s measured; `spawned`: the service process at `url`, whose CPU time is the server's. */
async function load(url: string, spawned?: ServiceProcess, duration = DURATION, connections = CONNECTIONS): Promise<Measured> {
  await autocannon(url, connections, WARMUP);
  const before = performance.eventLoopUtilization();
  const cpu = startCpuShare(postmasterPid);
  const spawnedCpu0 = spawned && processesCpu(spawned.pids());
  const started = performance.now();
  // Which worker holds autocannon's connections: the fullest of samples taken every 250 ms.
  let spread: number[] | undefined;
  const total = (counts: number[] | undefined) => (counts ?? []).reduce((a, b) => a + b, 0);
  const sampling = setInterval(() => {
    const sampled = [...(spawned?.connections()?.values() ?? [])];
    if (spawned && spawned.workers > 1 && total(sampled) > total(spread)) spread = sampled;
  }, 250);
  const result = await autocannon(url, connections, duration).finally(() => clearInterval(sampling));
  const spawnedCpu1 = spawned && processesCpu(spawned.pids());
  const seconds = (performance.now() - started) / 1000;
  const share = cpu?.();
  const busy = performance.eventLoopUtilization(before);
  if (!spawned) return { result, serverUs: (busy.active * 1000) / result.requests.total, otherCores: share?.otherCores };
  // The service's processes are neither this process nor PostgreSQL: startCpuShare counts them as others.
  const spawnedMs = spawnedCpu0 && spawnedCpu1 ? spawnedCpu1.user + spawnedCpu1.sys - spawnedCpu0.user - spawnedCpu0.sys : undefined;
  return {
    result,
    serverUs: spawnedMs === undefined ? NaN : (spawnedMs * 1000) / result.requests.total,
    otherCores: share && spawnedMs !== undefined ? Math.max(0, share.otherCores - spawnedMs / 1000 / seconds) : undefined,
    spread,
  };
}

const ids = (rows: Array<{ id: unknown }>) => rows.map((row) => String(row.id));
const keysetKey = (body: Body) => [ids(body.events), body.next_cursor !== null];

function endpoints(deep: { cursor: string; afterId: string; depth: number }, busy: BusyMarket): Endpoint[] {
  return [
    // (its body is a bare array of events)
    { name: 'GET /events?limit=20', service: '/events?limit=20', key: (body) => ids(body as unknown as Array<{ id: unknown }>) },
    { name: 'GET /events/keyset?limit=20 (first page)', service: '/events/keyset?limit=20', key: keysetKey },
    {
      name: `GET /events/keyset?limit=20 (${deep.depth.toLocaleString('en')} deep)`,
      service: `/events/keyset?limit=20&after_cursor=${encodeURIComponent(deep.cursor)}`,
      baseline: `/events/keyset?limit=20&after=${deep.afterId}`,
      key: keysetKey,
    },
    { name: 'GET /events/pagination?limit=20', service: '/events/pagination?limit=20', key: (body) => [ids(body.data), body.pagination] },
    {
      name: 'GET /api/events?with_nested_markets=true',
      service: '/api/events?with_nested_markets=true',
      key: (body) => [body.events.map((e) => [String(e.id), ids(e.markets)]), body.cursor !== null],
    },
    ...[
      { q: WORD, searchTarget: false },
      { q: MISS, searchTarget: true, shareWithoutTarget: true, what: 'miss' },
      { q: TYPO, searchTarget: true, what: 'typo' },
      { q: WORDS, searchTarget: true, what: 'three words' },
    ].flatMap(({ q, searchTarget, shareWithoutTarget, what }): Endpoint[] => {
      const query = `q=${encodeURIComponent(q)}`;
      const label = `q=${q}${what ? ` (${what})` : ''}`;
      const lists = (body: Body) => [ids(body.events), ids(body.tags), ids(body.profiles)];
      return [
        { name: `GET /api/search?${label}`, service: `/api/search?${query}`, key: (body) => body.results.map((r) => `${r.kind}:${String(r.id)}`), searchTarget, shareWithoutTarget },
        {
          name: `GET /public-search?${label}`,
          service: `/public-search?${query}`,
          key: (body) => [...lists(body), body.pagination],
          // the search's own result, not presented: its counts beside its lists
          baselineKey: (body) => [...lists(body), { hasMore: body.hasMore, totalResults: body.totalResults }],
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
    afterId = String(body.events.at(-1)!.id);
  }
  if (!cursor) throw new Error('the keyset list has a single page: seed more events');
  return { cursor, afterId, depth: walked };
}

const captureContext = new AsyncLocalStorage<string>();

/**
 * How many statements the service runs for one request (knex's query events on all its pools, BEGIN/SET/COMMIT
 * included), and only that request's: the request carries a marker header, and a listener placed before the
 * app's on the server enters an async context for it, which the query events are checked against. Whatever
 * else runs meanwhile (the trading expiry sweep, say) is left out.
 */
async function countStatements(service: RunningService, url: string): Promise<number> {
  let count = 0;
  const token = randomUUID();
  const mark = (request: IncomingMessage) => {
    if (request.headers['x-bench-capture'] === token) captureContext.enterWith(token);
  };
  const listener = () => {
    if (captureContext.getStore() === token) count++;
  };
  const pools = Object.values(service.pools as Record<keyof RunningService['pools'], Db>);
  service.server.prependListener('request', mark);
  for (const db of pools) db.on('query', listener);
  try {
    await getJson(url, { 'x-bench-capture': token });
  } finally {
    for (const db of pools) db.removeListener('query', listener);
    service.server.removeListener('request', mark);
    // An enabled AsyncLocalStorage makes every promise of the process pay for its hooks (several percent of
    // a request's time, the service's more than a baseline's): off before anything is measured.
    captureContext.disable();
  }
  if (count === 0) throw new Error(`GET ${url}: no statement was captured`);
  return count;
}

/** What the table prints of one or more measurements of a row. */
type Figures = ReturnType<typeof figuresOf>;

/** An endpoint measured in ROUNDS rounds, each the service then its baseline; its shares are the service's req/s over its baseline's. */
type Row = Pick<Endpoint, 'name' | 'searchTarget' | 'shareWithoutTarget' | 'busyMarket'> & { chart?: Figures; statements: number; rounds: Array<{ service: Measured; baseline: Measured }>; service: Figures; baseline: Figures } & ReturnType<typeof sharesOf>;

function rowOf({ name, searchTarget, shareWithoutTarget, busyMarket }: Endpoint, statements: number, rounds: Row['rounds'], chart?: Measured): Row {
  const [service, baseline] = [rounds.map((round) => round.service), rounds.map((round) => round.baseline)];
  return { name, searchTarget, shareWithoutTarget, busyMarket, chart: chart && figuresOf([chart]), statements, rounds, service: figuresOf(service), baseline: figuresOf(baseline), ...sharesOf(service, baseline) };
}

/** An endpoint measured on `node dist/main.js` with this many workers. */
type ProcessRow = { name: string; workers: number; measured: Measured };

function printRows(rows: Row[], ceiling: Measured, processRows: ProcessRow[]): void {
  const lines = [
    ['row', 'req/s', 'p50 ms', 'p99 ms', 'srv µs/req', 'KB/resp', 'others', 'stmts', '% baseline', 'rounds'],
    ['bare Koa, constant JSON (ceiling)', ...numbers(figuresOf([ceiling])), '-', '-', ''],
  ];
  for (const row of rows) {
    lines.push([`service   ${row.name}`, ...numbers(row.service), String(row.statements), percent(row.share), row.shares.map(percent).join(' ')]);
    lines.push([`  baseline (Koa + pg, 1 statement)`, ...numbers(row.baseline), '1', '', '']);
    if (row.chart) lines.push([`  service at ${CHART_CONNECTIONS} connection (a chart's traffic)`, ...numbers(row.chart), '', '', '']);
  }
  for (const row of processRows) {
    const baseline = rows.find((r) => r.name === row.name)?.baseline;
    const figures = figuresOf([row.measured]);
    lines.push([`service   ${row.name}, ${processLabel(row.workers)}`, ...numbers(figures), '-', baseline ? percent(figures.rps / baseline.rps) : '-', '']);
  }
  printTable(lines);
}

function numbers({ rps, p50, p99, serverUs, kbPerResponse, otherCores }: Figures): string[] {
  const unknown = (n: number | undefined, digits: number) => (n === undefined || !Number.isFinite(n) ? '?' : n.toFixed(digits));
  return [rps.toFixed(0), String(p50), String(p99), unknown(serverUs, 0), kbPerResponse.toFixed(1), unknown(otherCores, 2)];
}

/** The catalogue's figures, checked to hold what the searches measured need (a common word, a miss, a typo, three words). */
async function checkCatalogue(databaseUrl: string, serviceUrl: string): Promise<{ events: number; markets: number; active: number; with_word: number; version: string }> {
  const facts = new pg.Client({ connectionString: databaseUrl });
  await facts.connect();
  const counts = (
    await facts.query<{ events: number; markets: number; active: number; with_word: number; version: string }>(
      `select (select count(*)::int from events) as events, (select count(*)::int from markets) as markets,
              (select count(*)::int from events where status = 'ACTIVE') as active,
              (select count(*)::int from events where lower(title) like $1) as with_word,
              current_setting('server_version') as version`,
      [`%${WORD}%`],
    )
  ).rows[0]!;
  // Whether a word of some item's searchable text begins with the typo (fields and words separated by spaces).
  const typoPrefixes = (await facts.query<{ n: number }>(`select count(*)::int as n from (select 1 from events where (' ' || search_text) like $1 union all select 1 from markets where (' ' || search_text) like $1 limit 1) x`, [`% ${TYPO}%`])).rows[0]!.n;
  await facts.end();
  if (counts.with_word === 0) throw new Error(`no event title contains '${WORD}'`);
  if (typoPrefixes > 0) throw new Error(`'${TYPO}' begins a word of the catalogue, so it is no typo`);
  const found = async (q: string) => (await getJson(`${serviceUrl}/api/search?q=${encodeURIComponent(q)}`)).results.length;
  if ((await found(MISS)) > 0) throw new Error(`'${MISS}' finds items`);
  if ((await found(TYPO)) === 0) throw new Error(`'${TYPO}' finds nothing`);
  if ((await found(WORDS)) === 0) throw new Error(`'${WORDS}' finds nothing`);
  return counts;
}

function printLegend(localDatabase: boolean): void {
  console.log(
    '\nsrv µs/req: main-thread busy time per answered request (every server runs in this thread, autocannon in a worker);\n' +
      'KB/resp: bytes of one response, headers included;\n' +
      `others: cores (of ${availableParallelism()}) kept busy by other processes during the row` +
      `${localDatabase ? '' : ' (the external PostgreSQL counts among them)'};\n` +
      "stmts: SQL statements per request (BEGIN, SET and COMMIT included); % baseline: the endpoint's req/s over its baseline's.\n" +
      `Rows "${processLabel(1)}" and "=2": the service as deployed, a process of its own on the same database (LOG_LEVEL=warn, so\n` +
      'no access log; with 2, a primary and 2 HTTP workers on one port, each with its own pools), the service of this process stopped;\n' +
      "their srv µs/req is the CPU time (user + system, from /proc) of all the service's processes per answered request, and\n" +
      'their others leave those processes out; % baseline: over the same in-process baseline as above; no target on these rows.',
  );
}

/** Each row held to its targets (its share of the baseline, its p99, the searches' own). */
function rowVerdicts(rows: Row[]): Array<{ ok: boolean; text: string }> {
  return rows.flatMap(({ name, share, shares, service: { p99, rps }, chart, searchTarget, shareWithoutTarget, busyMarket }) => [
    ...(shareWithoutTarget || busyMarket ? [] : [{ ok: share >= TARGET_SHARE, text: `${name}: ${percent(share)} of its baseline's req/s, median of ${shares.map(percent).join(', ')} (target >= ${TARGET_SHARE * 100}%)` }]),
    ...(busyMarket ? [] : [{ ok: p99 < TARGET_P99_MS, text: `${name}: p99 ${p99} ms (target < ${TARGET_P99_MS} ms)` }]),
    ...(chart ? [{ ok: chart.p99 < TARGET_CANDLES_P99_MS, text: `${name}: p99 ${chart.p99} ms at ${CHART_CONNECTIONS} connection, ${p99} ms at ${CONNECTIONS} (target < ${TARGET_CANDLES_P99_MS} ms at ${CHART_CONNECTIONS})` }] : []),
    ...(searchTarget ? [{ ok: rps >= TARGET_SEARCH_RPS, text: `${name}: ${rps.toFixed(0)} req/s (target >= ${TARGET_SEARCH_RPS})` }] : []),
    ...(searchTarget ? [{ ok: p99 < TARGET_SEARCH_P99_MS, text: `${name}: p99 ${p99} ms (target < ${TARGET_SEARCH_P99_MS} ms)` }] : []),
  ]);
}

runBench('catalogue', async (defer) => {
  const started = performance.now();
  const database = await benchDatabase('bench-catalogue', `catalogue_${EVENTS}`, defer, true);
  postmasterPid = database.postmasterPid;
  const seededSeconds = await prepareCatalogue(database);
  const service = await startInProcess(database.url, defer);
  // Measured once ready, as a load balancer would send it traffic: its search index read whole.
  await service.ready;

  const ceilingApp = new Koa().use((ctx) => {
    ctx.body = { id: 'list', ok: true };
  });
  const ceiling = await listen(ceilingApp, defer);
  const baseline = await listen(createBaseline(database.url, service.services, defer), defer);

  const counts = await checkCatalogue(database.url, service.url);
  const busy = await prepareBusyMarket(database.url, service.url, log);

  log(`walking /events/keyset with limit=${WALK_PAGE} to ${DEPTH.toLocaleString('en')} rows deep`);
  const deep = await walkKeyset(service.url, DEPTH);
  if (deep.depth < DEPTH) log(`only ${deep.depth} ACTIVE events before the last page: the deep page is ${deep.depth} rows deep`);

  const list = endpoints(deep, busy);
  const statements = new Map<string, number>();
  /** What the service answered each endpoint (the items in order), which the service processes must answer too. */
  const answers = new Map<string, string>();
  for (const endpoint of list) {
    const [serviceBody, baselineBody] = await Promise.all([getJson(`${service.url}${endpoint.service}`), getJson(`${baseline.url}${endpoint.baseline ?? endpoint.service}`)]);
    const expected = JSON.stringify(endpoint.key(serviceBody));
    const actual = JSON.stringify((endpoint.baselineKey ?? endpoint.key)(baselineBody));
    if (expected !== actual) throw new Error(`${endpoint.name}: the baseline does not answer what the service answers:\n  service  ${expected}\n  baseline ${actual}`);
    answers.set(endpoint.name, expected);
    statements.set(endpoint.name, await countStatements(service, `${service.url}${endpoint.service}`));
  }
  const setupSeconds = (performance.now() - started) / 1000;

  log(`measuring the ceiling and ${list.length} endpoint(s), each in ${ROUNDS} round(s) of the service then its baseline, ${WARMUP} s + ${DURATION} s each`);
  const measureStarted = performance.now();
  const ceilingResult = await load(`${ceiling.url}/`);
  const rows: Row[] = [];
  for (const endpoint of list) {
    const rounds: Row['rounds'] = [];
    for (let round = 0; round < ROUNDS; round++) {
      const measured = { service: await load(`${service.url}${endpoint.service}`), baseline: await load(`${baseline.url}${endpoint.baseline ?? endpoint.service}`) };
      rounds.push(measured);
      const brief = ({ result, serverUs }: Measured) => `${result.requests.average.toFixed(0)} req/s, p99 ${result.latency.p99} ms (${serverUs.toFixed(0)} µs/req)`;
      log(`${endpoint.name}, round ${round + 1}: service ${brief(measured.service)}, baseline ${brief(measured.baseline)}`);
    }
    const chart = endpoint.candlesTarget ? await load(`${service.url}${endpoint.service}`, undefined, ROUNDS * DURATION, CHART_CONNECTIONS) : undefined;
    rows.push(rowOf(endpoint, statements.get(endpoint.name)!, rounds, chart));
  }

  // Stopped first, so that its background work stays out of the rows of the service processes.
  await service.stop();
  const processRows: ProcessRow[] = [];
  for (const workers of [1, 2]) {
    log(`starting ${processLabel(workers)} on the same database; measuring ${list.length} rows of ${WARMUP} s + ${ROUNDS * DURATION} s`);
    const spawned = await startServiceProcess({ databaseUrl: database.url, workers }, defer);
    for (const endpoint of list) {
      const answer = JSON.stringify(endpoint.key(await getJson(`${spawned.url}${endpoint.service}`)));
      if (answer !== answers.get(endpoint.name)) {
        throw new Error(`${endpoint.name}: ${processLabel(workers)} does not answer what the service answered:\n  service  ${answers.get(endpoint.name)}\n  process  ${answer}`);
      }
    }
    for (const endpoint of list) processRows.push({ name: endpoint.name, workers, measured: await load(`${spawned.url}${endpoint.service}`, spawned, ROUNDS * DURATION) });
    await spawned.stop();
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
      `PostgreSQL ${counts.version} (${database.label}); Node ${process.version}`,
  );
  console.log(
    `${CONNECTIONS} connections; each endpoint in ${ROUNDS} round(s) of the service then its baseline, ${DURATION} s each after ${WARMUP} s warm-up; autocannon in a worker thread; ` +
      `service log level ${process.env.LOG_LEVEL ?? 'info'} (to /dev/null); baseline pool of ${POOL_MAX} connections\n`,
  );
  printRows(rows, ceilingResult, processRows);
  printLegend(database.postmasterPid !== undefined);
  const spreads = processRows.filter((row) => row.measured.spread);
  if (spreads.length > 0) {
    console.log(`connections held by each worker during the row (${processLabel(2)}): ${spreads.map((row) => `${row.name} ${row.measured.spread!.join('/')}`).join('; ')}`);
  }
  console.log(`\nsetup ${setupSeconds.toFixed(0)} s (${seededSeconds === undefined ? 'catalogue reused' : `seeded in ${seededSeconds.toFixed(0)} s`}), measuring ${measureSeconds.toFixed(0)} s`);
  if (disturbed > 0) console.log(`WARNING: other work took more than ${DISTURBED_CORES} core during ${disturbed} row(s): measure again on a quiet machine`);

  const verdicts = rowVerdicts(rows);
  const first = rows.find((row) => row.name.includes('(first page)'))!;
  const deepRow = rows.find((row) => row.name.includes(' deep)'))!;
  const ratio = deepRow.service.p50 / first.service.p50;
  verdicts.push({
    ok: ratio <= TARGET_DEEP_P50,
    text: `keyset ${deep.depth.toLocaleString('en')} deep: p50 ${deepRow.service.p50} ms = ${ratio.toFixed(2)}x the first page's ${first.service.p50} ms (target <= ${TARGET_DEEP_P50}x)`,
  });
  reportTargets(verdicts);
});

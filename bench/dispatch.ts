/**
 * npm run bench:dispatch: what the OpenAPI dispatcher costs per request, against plain Koa.
 *
 * The real bundled document (openapi/dist/openapi.json) is padded with generated operations to at least
 * 150, their request validators are emitted exactly as `npm run codegen` emits the service's
 * (codegen/validators.ts) and loaded from a CommonJS file, and the dispatcher is built by the service's own
 * createApiMiddleware. Each server runs in a process of its own (bench/dispatch-server.ts), as the service
 * does, started just before it is first measured, and is loaded at 32 connections by autocannon in a worker
 * thread of this process:
 *   - plain Koa answering a constant JSON;
 *   - the full stack (the middleware chain src/app.ts builds: request lifecycle with info logging to
 *     /dev/null, docs assets, JSON body parser, dispatcher) on a literal path;
 *   - the full stack on a templated path with a validated query;
 *   - the same with request budgets on (src/http/rate-limit.ts, as the service runs by default), with a
 *     budget no client of the benchmark reaches: what taking each request from its budget costs.
 *   - the same with metrics on (src/observability/metrics.ts: a counter and a histogram per request).
 * The padded operations' handler answers a small constant JSON (no database), as plain Koa does.
 * The rows are measured in BENCH_ROUNDS rounds (default 5), every row once per round, each time paired
 * with plain Koa measured just before it or just after it (in turn, round by round): on a small virtual
 * machine the same server's requests/s moves by a fifth or more from one measurement to the next, and the
 * host's speed drifts over seconds. Each row's share of plain Koa is the median of its pairs' shares (each
 * printed); its requests/s the mean of its rounds', p50 and p99 their medians; plain Koa's row is all of
 * its measurements.
 * Besides requests/s and latency, each row shows the server's event-loop busy time per request (from
 * performance.eventLoopUtilization), which is what the dispatcher adds independently of the load generator.
 * Exits non-zero if a row answers anything but 200, or if the full stack is under TARGET_SHARE of plain Koa
 * on either path, with request budgets or with metrics on, or if the start to the first answer takes 5 s or more.
 *
 * Options (environment): BENCH_DURATION seconds per row and round (default 2), BENCH_ROUNDS (default 5), BENCH_WARMUP (default 1),
 * BENCH_CONNECTIONS (default 32), BENCH_OPERATIONS minimum operation count (default 150),
 * BENCH_BREAKDOWN=1 adds two rows (the chain without the dispatcher; the dispatcher without the chain).
 */
import { type ChildProcess, execFileSync, fork } from 'node:child_process';
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { fileURLToPath } from 'node:url';
import type { OpenAPIV3 } from 'openapi-types';
import { emitRequestValidators } from '../codegen/validators.js';
import { limitHeaders, type RequestLimiter } from '../src/http/rate-limit.js';
import { BENCH_HANDLER, type ServerKind, UNREACHABLE_BUDGET, unreachableLimiter } from './dispatch-server.js';
import { type AutocannonResult, autocannon, median } from './lib.js';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');


const DURATION = Number(process.env.BENCH_DURATION ?? 2);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 5);
if (!(DURATION > 0) || !Number.isSafeInteger(ROUNDS) || ROUNDS < 1) {
  console.error('bench:dispatch: BENCH_DURATION must be a positive number of seconds, BENCH_ROUNDS a positive whole number');
  process.exit(2);
}
const WARMUP = Number(process.env.BENCH_WARMUP ?? 1);
const CONNECTIONS = Number(process.env.BENCH_CONNECTIONS ?? 32);
const MIN_OPERATIONS = Number(process.env.BENCH_OPERATIONS ?? 150);
const TARGET_SHARE = 0.6;
const START_LIMIT_MS = 5000;
const METHODS = ['get', 'put', 'post', 'delete', 'patch', 'head', 'options', 'trace'] as const;

function countOperations(doc: OpenAPIV3.Document): number {
  return Object.values(doc.paths ?? {}).reduce((n, item) => n + METHODS.filter((m) => item?.[m]).length, 0);
}

/**
 * Pads the document with groups of generated operations shaped like the API's (collections, items by id,
 * literal siblings of templates, nested resources), until it has at least `minimum`; at least one group,
 * which the benchmark requests. No security: their handler needs no database.
 */
function padDocument(real: OpenAPIV3.Document, minimum: number): { doc: OpenAPIV3.Document; literal: string; templated: string } {
  const doc = structuredClone(real);
  doc.paths ??= {};
  doc.components ??= {};
  doc.components.schemas = {
    ...doc.components.schemas,
    BenchItem: { type: 'object', required: ['id', 'ok'], properties: { id: { type: 'string' }, ok: { type: 'boolean' } } },
  };
  const json = (description: string): OpenAPIV3.ResponseObject => ({
    description,
    content: { 'application/json': { schema: { $ref: '#/components/schemas/BenchItem' } } },
  });
  const responses: OpenAPIV3.ResponsesObject = { '200': json('a constant'), '400': { description: 'invalid request' } };
  const query: OpenAPIV3.ParameterObject[] = [
    { name: 'limit', in: 'query', required: false, schema: { type: 'integer', minimum: 1, maximum: 500 } },
    { name: 'status', in: 'query', required: false, schema: { type: 'string', enum: ['open', 'closed', 'settled'] } },
    { name: 'cursor', in: 'query', required: false, schema: { type: 'string', maxLength: 200 } },
  ];
  const idParam: OpenAPIV3.ParameterObject = { name: 'id', in: 'path', required: true, schema: { type: 'string', pattern: '^[A-Za-z0-9-]{1,64}$' } };
  const body: OpenAPIV3.RequestBodyObject = {
    required: true,
    content: {
      'application/json': {
        schema: {
          type: 'object',
          additionalProperties: false,
          required: ['name'],
          properties: { name: { type: 'string', minLength: 1, maxLength: 100 }, size: { type: 'integer', minimum: 0 } },
        },
      },
    },
  };
  const op = (operationId: string, extra: Partial<OpenAPIV3.OperationObject> = {}): OpenAPIV3.OperationObject =>
    ({ operationId, security: [], 'x-handler': BENCH_HANDLER, responses, ...extra }) as OpenAPIV3.OperationObject;

  let group = 0;
  let last = 0;
  do {
    const base = `/bench/r${group}`;
    doc.paths[`${base}/items`] = {
      get: op(`benchListItems${group}`, { parameters: query }),
      post: op(`benchCreateItem${group}`, { requestBody: body }),
    };
    doc.paths[`${base}/items/summary`] = { get: op(`benchItemSummary${group}`) };
    doc.paths[`${base}/items/{id}`] = {
      parameters: [idParam],
      get: op(`benchGetItem${group}`, { parameters: query }),
      put: op(`benchReplaceItem${group}`, { requestBody: body }),
      delete: op(`benchDeleteItem${group}`),
    };
    doc.paths[`${base}/items/{id}/history`] = { parameters: [idParam], get: op(`benchItemHistory${group}`, { parameters: query }) };
    last = group;
    group += 1;
  } while (countOperations(doc) < minimum);
  return {
    doc,
    literal: `/bench/r${last}/items`,
    templated: `/bench/r${last}/items/item-42?limit=20&status=open`,
  };
}

async function expectStatus(url: string, status: number, init?: RequestInit): Promise<void> {
  const response = await fetch(url, init);
  const text = await response.text();
  if (response.status !== status) throw new Error(`${init?.method ?? 'GET'} ${url}: expected ${status}, got ${response.status} ${text}`);
}

/** One row measured once. */
interface Measured {
  result: AutocannonResult;
  /** Event-loop busy time of the server thread per answered request, in µs. */
  serverUs: number;
}

/** What a row measures (plain Koa aside). */
type RowId = 'literal' | 'templated' | 'limited' | 'metrics' | 'chain' | 'dispatcher';

/** A row over its rounds. */
interface Row {
  id: RowId | 'plain';
  name: string;
  rounds: Measured[];
  rps: number;
  p50: number;
  p99: number;
  serverUs: number;
  /** Each round's requests/s over that of the plain Koa measurement paired with it, and their median. */
  shares: number[];
  share: number;
}

function rowOf(id: Row['id'], name: string, rounds: Measured[], plain: Measured[]): Row {
  const shares = rounds.map((m, i) => m.result.requests.average / plain[i]!.result.requests.average);
  const requests = rounds.reduce((sum, m) => sum + m.result.requests.total, 0);
  return {
    id,
    name,
    rounds,
    rps: rounds.reduce((sum, m) => sum + m.result.requests.average, 0) / rounds.length,
    p50: median(rounds.map((m) => m.result.latency.p50)),
    p99: median(rounds.map((m) => m.result.latency.p99)),
    serverUs: rounds.reduce((sum, m) => sum + m.serverUs * m.result.requests.total, 0) / requests,
    shares,
    share: median(shares),
  };
}

/** A server of the benchmark: its process, the URL it listens on, its time from loading to listening. */
interface Server {
  kind: ServerKind;
  child: ChildProcess;
  url: string;
  startMs: number;
}

/** The answer to `message` that carries `key`. */
function ask<T>(child: ChildProcess, message: string | undefined, key: string): Promise<T> {
  return new Promise((resolve, reject) => {
    const onMessage = (answer: unknown) => {
      if (typeof answer !== 'object' || answer === null || !(key in answer)) return;
      child.off('message', onMessage);
      child.off('exit', onExit);
      resolve((answer as Record<string, T>)[key]!);
    };
    const onExit = (code: number | null) => reject(new Error(`bench:dispatch server exited with ${code}`));
    child.on('message', onMessage);
    child.once('exit', onExit);
    if (message !== undefined) child.send(message);
  });
}

/**
 * With two CPUs or more and taskset at hand, the servers run on the last CPU and this process (the load
 * generator's thread) on the others: left to the scheduler, a server and the load generator now and then
 * share a CPU for a whole measurement, and a row moves by a fifth. Returns the servers' CPU, or why not.
 */
function pinCpus(): { serverCpu: number } | { unpinned: string } {
  const cpus = os.availableParallelism();
  if (cpus < 2) return { unpinned: 'one CPU' };
  try {
    execFileSync('taskset', ['-a', '-p', '-c', `0-${cpus - 2}`, String(process.pid)], { stdio: 'ignore' });
    return { serverCpu: cpus - 1 };
  } catch {
    return { unpinned: 'no taskset' };
  }
}

/** Forks a server (this process's execArgv: the same TypeScript loader), on `cpu` when given. */
async function startServer(kind: ServerKind, files: { document: string; validators: string }, cpu: number | undefined): Promise<Server> {
  const child = fork(path.join(root, 'bench/dispatch-server.ts'), [kind], {
    env: { ...process.env, DISPATCH_DOCUMENT: files.document, DISPATCH_VALIDATORS: files.validators },
    stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
    ...(cpu === undefined ? {} : { execPath: 'taskset', execArgv: ['-c', String(cpu), process.execPath, ...process.execArgv] }),
  });
  const listening = ask<string>(child, undefined, 'listening');
  const startMs = ask<number>(child, undefined, 'startMs');
  return { kind, child, url: await listening, startMs: await startMs };
}

async function load(server: Server, pathAndQuery: string): Promise<Measured> {
  const options = { url: `${server.url}${pathAndQuery}`, connections: CONNECTIONS, workers: 1 };
  if (WARMUP > 0) await autocannon({ ...options, duration: WARMUP });
  await ask(server.child, 'busy', 'busyMs');
  const result = await autocannon({ ...options, duration: DURATION });
  const busyMs = await ask<number>(server.child, 'busy', 'busyMs');
  if (result.errors > 0 || result.timeouts > 0 || result.non2xx > 0 || result.requests.total === 0) {
    throw new Error(`${options.url}: ${result.errors} errors, ${result.timeouts} timeouts, status codes ${JSON.stringify(result.statusCodeStats)}`);
  }
  return { result, serverUs: (busyMs * 1000) / result.requests.total };
}

/**
 * CPU time per RequestLimiter.take (headers built), on one client address and spread over 100,000 (made
 * beforehand, as a request's address is its socket's).
 */
function limiterCpuCost(limiter: RequestLimiter): { oneKey: number; manyKeys: number } {
  const addresses = Array.from({ length: 100_000 }, (_, i) => `10.${(i >> 16) & 255}.${(i >> 8) & 255}.${i & 255}`);
  const measure = (keys: number, calls: number) => {
    for (let i = 0; i < 10_000; i++) limitHeaders(limiter.take('public-reads', 'address', addresses[i % keys]!));
    const before = process.cpuUsage();
    for (let i = 0; i < calls; i++) limitHeaders(limiter.take('public-reads', 'address', addresses[i % keys]!));
    const used = process.cpuUsage(before);
    return (used.user + used.system) / calls;
  };
  return { oneKey: measure(1, 300_000), manyKeys: measure(100_000, 300_000) };
}

async function main(): Promise<void> {
  const real = JSON.parse(await readFile(path.join(root, 'openapi/dist/openapi.json'), 'utf8').catch(() => {
    throw new Error('openapi/dist/openapi.json is missing: run npm run codegen');
  })) as OpenAPIV3.Document;
  const { doc, literal, templated } = padDocument(real, MIN_OPERATIONS);
  const realCount = countOperations(real);
  const total = countOperations(doc);

  // Build time, not start time: what `npm run codegen` does for the service's own document.
  const started = performance.now();
  const code = await emitRequestValidators(doc);
  // Inside node_modules so that the emitted require("ajv/...") calls resolve as they do from src/generated.
  const cache = path.join(root, 'node_modules/.cache/dots-bench');
  const files = { document: path.join(cache, 'dispatch-document.json'), validators: path.join(cache, 'request-validators.cjs') };
  await mkdir(cache, { recursive: true });
  await writeFile(files.validators, code);
  await writeFile(files.document, JSON.stringify(doc));
  const codegenMs = performance.now() - started;

  const servers = new Map<ServerKind, Server>();
  const pinned = pinCpus();
  try {
    // Each server is started when it is first measured, as the first two are here: a Node process that
    // answers a request or two and then sits idle for some seconds runs about a quarter slower under the load
    // that follows, for tens of seconds, and one that only started a little slower (plain Koa's too; not with
    // V8's memory reducer off: docs/architecture.md). Started together, the servers measured later would be
    // measured so.
    const server = async (kind: ServerKind): Promise<Server> => {
      let started = servers.get(kind);
      if (started === undefined) {
        started = await startServer(kind, files, 'serverCpu' in pinned ? pinned.serverCpu : undefined);
        servers.set(kind, started);
      }
      return started;
    };
    await server('plain');
    const fullServer = await server('full');
    const full = fullServer.url;
    // Start: load the precompiled validators, build the dispatcher and the app, listen (in the server), first answer.
    const firstAnswer = performance.now();
    await expectStatus(`${full}${templated}`, 200);
    const startMs = fullServer.startMs + performance.now() - firstAnswer;

    // The dispatcher really routes and validates: these must not be 200.
    const item = templated.split('?')[0]!;
    await expectStatus(`${full}${item}?limit=0`, 400);
    await expectStatus(`${full}${item}?status=bogus`, 400);
    await expectStatus(`${full}${item}?limit=abc`, 400);
    await expectStatus(`${full}${literal}/`, 200);
    await expectStatus(`${full}${literal.replace('/items', '/nothing')}`, 404);
    await expectStatus(`${full}${literal}`, 405, { method: 'PATCH' });
    await expectStatus(`${full}${literal}`, 400, { method: 'POST', body: '{"size":-1}', headers: { 'content-type': 'application/json' } });

    const targets: Array<{ id: RowId; name: string; server: ServerKind; path: string }> = [
      { id: 'literal', name: `full stack, literal   GET ${literal}`, server: 'full', path: literal },
      { id: 'templated', name: `full stack, templated GET ${templated}`, server: 'full', path: templated },
      { id: 'limited', name: `full stack with rate limiting, templated GET`, server: 'limited', path: templated },
      { id: 'metrics', name: `full stack + metrics, templated GET`, server: 'metrics', path: templated },
    ];
    if (process.env.BENCH_BREAKDOWN === '1') {
      targets.push({ id: 'chain', name: '  chain without dispatcher, constant JSON', server: 'chain', path: '/' });
      targets.push({ id: 'dispatcher', name: `  dispatcher alone, GET ${templated}`, server: 'dispatcher', path: templated });
    }
    // Each target once a round, paired with plain Koa measured just before it or just after (in turn).
    const measured = targets.map(() => ({ rounds: [] as Measured[], plain: [] as Measured[] }));
    for (let round = 0; round < ROUNDS; round++) {
      for (const [i, target] of targets.entries()) {
        const plainFirst = (round + i) % 2 === 0;
        if (plainFirst) measured[i]!.plain.push(await load(await server('plain'), '/'));
        measured[i]!.rounds.push(await load(await server(target.server), target.path));
        if (!plainFirst) measured[i]!.plain.push(await load(await server('plain'), '/'));
      }
    }
    // Checked after the rounds, not before: one request answered some seconds before a server's first load
    // leaves its process about a quarter slower under that load (plain Koa's too; docs/architecture.md).
    const limitedAnswer = await fetch(`${(await server('limited')).url}${templated}`);
    await limitedAnswer.arrayBuffer();
    if (limitedAnswer.headers.get('ratelimit-limit') !== String(UNREACHABLE_BUDGET.points)) throw new Error('the limited stack does not answer with its RateLimit headers');
    const plainMeasured = measured.flatMap(({ plain }) => plain);
    const rows = [rowOf('plain', 'plain Koa, constant JSON', plainMeasured, plainMeasured), ...targets.map((target, i) => rowOf(target.id, target.name, measured[i]!.rounds, measured[i]!.plain))];
    const answered = rowById(rows, 'metrics').rounds.reduce((sum, m) => sum + m.result.requests.total, 0);
    const counted = await ask<number>((await server('metrics')).child, 'counted', 'counted');
    if (counted < answered) throw new Error(`metrics counted ${counted} requests, fewer than the ${answered} answered`);
    report(rows, { total, realCount, startMs, codegenMs, cpus: 'serverCpu' in pinned ? `servers on CPU ${pinned.serverCpu}, load generator on the others` : `not pinned to CPUs (${pinned.unpinned})` });
  } finally {
    for (const { child } of servers.values()) child.disconnect();
  }
}

function rowById(rows: Row[], id: Row['id']): Row {
  return rows.find((row) => row.id === id)!;
}

/** The rows that must reach TARGET_SHARE: the full stack on both paths, with request budgets, with metrics. */
const TARGETED: ReadonlyArray<Row['id']> = ['literal', 'templated', 'limited', 'metrics'];

function report(rows: Row[], figures: { total: number; realCount: number; startMs: number; codegenMs: number; cpus: string }): void {
  const { total, realCount, startMs, codegenMs, cpus } = figures;
  const width = Math.max(...rows.map((row) => row.name.length));
  const pad = (text: string, n: number) => text.padStart(n);
  console.log(
    `\ndispatch benchmark: ${total} operations (${realCount} real + ${total - realCount} generated), ${CONNECTIONS} connections, ` +
      `${ROUNDS} round(s) of every row, ${DURATION} s per row after ${WARMUP} s warm-up, a process per server (${cpus}), Node ${process.version}\n`,
  );
  const percent = (share: number) => `${(share * 100).toFixed(0)}%`;
  console.log(`${'row'.padEnd(width)}  ${pad('req/s', 7)}  ${pad('p50 ms', 6)}  ${pad('p99 ms', 6)}  ${pad('% plain', 7)}  ${pad('server µs/req', 13)}  rounds (% plain)`);
  console.log('-'.repeat(width + 69));
  for (const row of rows) {
    console.log(
      `${row.name.padEnd(width)}  ${pad(row.rps.toFixed(0), 7)}  ${pad(String(row.p50), 6)}  ${pad(String(row.p99), 6)}  ${pad(percent(row.share), 7)}  ${pad(row.serverUs.toFixed(1), 13)}  ${row.id === 'plain' ? `(${row.rounds.length} measurements)` : row.shares.map(percent).join(' ')}`,
    );
  }
  const cost = rowById(rows, 'limited').serverUs - rowById(rows, 'templated').serverUs;
  // the limited server's budgets
  const alone = limiterCpuCost(unreachableLimiter());
  console.log(`\nrate limiting: ${cost.toFixed(1)} µs of server time per request (limited templated row minus the templated row);`);
  console.log(`  the limiter alone: ${alone.oneKey.toFixed(2)} µs of CPU per request on one client, ${alone.manyKeys.toFixed(2)} µs over 100,000 clients (process CPU time, not disturbed by other load)`);
  console.log(`start to first answer (load validators, create dispatcher, listen, first 200): ${startMs.toFixed(0)} ms`);
  console.log(`(build step, not start: emitting the padded document's validators took ${(codegenMs / 1000).toFixed(1)} s)`);

  const failures: string[] = [];
  for (const { name, share, shares } of rows.filter((row) => TARGETED.includes(row.id))) {
    if (share < TARGET_SHARE) failures.push(`${name}: ${percent(share)} of plain Koa (median of ${shares.map(percent).join(', ')}), under ${TARGET_SHARE * 100}%`);
  }
  if (startMs >= START_LIMIT_MS) failures.push(`start to first answer ${startMs.toFixed(0)} ms >= ${START_LIMIT_MS} ms`);
  if (failures.length > 0) {
    console.log(`\nTARGET MISSED:\n  - ${failures.join('\n  - ')}`);
    process.exitCode = 1;
  } else {
    console.log(`\ntarget met: full stack >= ${TARGET_SHARE * 100}% of plain Koa on both paths with rate limiting and with metrics on, start < ${START_LIMIT_MS / 1000} s`);
  }
}

main().catch((error: unknown) => {
  console.error('bench:dispatch failed:', error);
  process.exit(1);
});

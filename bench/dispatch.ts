/**
 * npm run bench:dispatch: what the OpenAPI dispatcher costs per request, against plain Koa.
 *
 * The real bundled document (openapi/dist/openapi.json) is padded with generated operations to at least
 * 150, their request validators are emitted exactly as `npm run codegen` emits the service's
 * (codegen/validators.ts) and loaded from a CommonJS file, and the dispatcher is built by the service's own
 * createApiMiddleware. Then, one after another, at 32 connections (autocannon in a worker thread, so the
 * server keeps its own core):
 *   - plain Koa answering a constant JSON;
 *   - the full stack (the middleware chain src/app.ts builds: request lifecycle with info logging to
 *     /dev/null, docs assets, JSON body parser, dispatcher) on a literal path;
 *   - the full stack on a templated path with a validated query;
 *   - the same with request budgets on (src/http/rate-limit.ts, as the service runs by default), with a
 *     budget no client of the benchmark reaches: what taking each request from its budget costs.
 *   - the same with metrics on (src/observability/metrics.ts: a counter and a histogram per request).
 * The padded operations' handler answers a small constant JSON (no database), as plain Koa does.
 * The rows are measured in BENCH_ROUNDS rounds (default 5), every row once per round (the metrics row's
 * rounds last, since metrics watch the whole process once made), each time paired with plain Koa measured
 * just before it or just after it (in turn, round by round): on a small virtual machine the same server's
 * requests/s moves by a fifth or more from one measurement to the next, and the host's speed drifts over
 * seconds. Each row's share of plain Koa is the median of its pairs' shares (each printed); its requests/s
 * the mean of its rounds', p50 and p99 their medians; plain Koa's row is all of its measurements.
 * Besides requests/s and latency, each row shows the server's event-loop busy time per request (from
 * performance.eventLoopUtilization), which is what the dispatcher adds independently of the load generator.
 * Exits non-zero if a row answers anything but 200, or if the full stack is under TARGET_SHARE of plain Koa
 * on either path, with request budgets or with metrics on, or if the start to the first answer takes 5 s or more.
 *
 * Options (environment): BENCH_DURATION seconds per row and round (default 2), BENCH_ROUNDS (default 5), BENCH_WARMUP (default 1),
 * BENCH_CONNECTIONS (default 32), BENCH_OPERATIONS minimum operation count (default 150),
 * BENCH_BREAKDOWN=1 adds two rows (the chain without the dispatcher; the dispatcher without the chain),
 * BENCH_WORKERS=0 runs autocannon in the server's own thread instead of a worker thread.
 */
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { fileURLToPath } from 'node:url';
import Koa from 'koa';
import type { OpenAPIV3 } from 'openapi-types';
import { listOperations } from '../codegen/operations.js';
import { emitRequestValidators } from '../codegen/validators.js';
import { buildApp } from '../src/app.js';
import { handlers } from '../src/handlers/index.js';
import { createApiMiddleware, type DispatchEntry, type OperationImplementation } from '../src/http/api.js';
import { RequestLimiter } from '../src/http/rate-limit.js';
import { loadAbuseConfig } from '../src/config.js';
import { createLogger, logDestination } from '../src/logger.js';
import type { ObservabilityConfig } from '../src/config.js';
import { observedHttp } from '../src/observability/http.js';
import { ServiceMetrics } from '../src/observability/metrics.js';
import type { Services } from '../src/services.js';
import { type AutocannonResult, autocannon, close, listen, median } from './lib.js';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const require = createRequire(import.meta.url);


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
const BENCH_HANDLER = 'benchConstant';
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

/** The default settings of the layers around the dispatcher (no CORS, no metrics token). */
const OBSERVABILITY: ObservabilityConfig = { corsOrigins: [], catalogueMaxAgeSecs: 5, metricsPort: undefined, metricsToken: undefined, shutdownDelaySecs: 0 };

/**
 * The app createApp (src/app.ts) serves, around the given dispatcher, logging at `logLevel` to /dev/null:
 * HTTP caching, and request metrics when `metrics` is given (as with METRICS_PORT or METRICS_TOKEN set).
 */
function fullStack(dispatcher: Koa.Middleware, logLevel: string, services: Services, metrics?: ServiceMetrics): Koa {
  return buildApp(createLogger(logLevel, logDestination('/dev/null')), dispatcher, observedHttp(services, OBSERVABILITY, metrics));
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

/** A row over its rounds. */
interface Row {
  name: string;
  rounds: Measured[];
  rps: number;
  p50: number;
  p99: number;
  serverUs: number;
  /** Each round's requests/s over plain Koa's of the same round, and their median. */
  shares: number[];
  share: number;
}

function rowOf(name: string, rounds: Measured[], plain: Measured[]): Row {
  const shares = rounds.map((m, i) => m.result.requests.average / plain[i]!.result.requests.average);
  const requests = rounds.reduce((sum, m) => sum + m.result.requests.total, 0);
  return {
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

async function load(url: string): Promise<Measured> {
  const options = { url, connections: CONNECTIONS, ...(process.env.BENCH_WORKERS === '0' ? {} : { workers: 1 }) };
  if (WARMUP > 0) await autocannon({ ...options, duration: WARMUP });
  const before = performance.eventLoopUtilization();
  const result = await autocannon({ ...options, duration: DURATION });
  const busy = performance.eventLoopUtilization(before);
  if (result.errors > 0 || result.timeouts > 0 || result.non2xx > 0 || result.requests.total === 0) {
    throw new Error(`${url}: ${result.errors} errors, ${result.timeouts} timeouts, status codes ${JSON.stringify(result.statusCodeStats)}`);
  }
  return { result, serverUs: (busy.active * 1000) / result.requests.total };
}

/**
 * CPU time per RequestLimiter.take (headers built), on one client address and spread over 100,000 (made
 * beforehand, as a request's address is its socket's).
 */
async function limiterCpuCost(limiter: RequestLimiter): Promise<{ oneKey: number; manyKeys: number }> {
  const { limitHeaders } = await import('../src/http/rate-limit.js');
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

const constant: Koa.Middleware = (ctx) => {
  ctx.body = { id: 'list', ok: true };
};

async function main(): Promise<void> {
  const real = JSON.parse(await readFile(path.join(root, 'openapi/dist/openapi.json'), 'utf8').catch(() => {
    throw new Error('openapi/dist/openapi.json is missing: run npm run codegen');
  })) as OpenAPIV3.Document;
  const { doc, literal, templated } = padDocument(real, MIN_OPERATIONS);
  const realCount = countOperations(real);
  const total = countOperations(doc);

  // Build time, not start time: what `npm run codegen` does for the service's own document.
  let started = performance.now();
  const code = await emitRequestValidators(doc);
  const operations: Record<string, DispatchEntry> = {};
  // Every field of the generated table (roles, clamps, budgets, API key scopes), as the service's.
  for (const op of listOperations(doc)) operations[op.operationId] = op;
  // Inside node_modules so that the emitted require("ajv/...") calls resolve as they do from src/generated.
  const validatorsFile = path.join(root, 'node_modules/.cache/dots-bench/request-validators.cjs');
  await mkdir(path.dirname(validatorsFile), { recursive: true });
  await writeFile(validatorsFile, code);
  const codegenMs = performance.now() - started;

  const benchHandler: OperationImplementation = async (request) => ({
    status: 200,
    body: { id: (request.params as { id?: string } | undefined)?.id ?? 'list', ok: true },
  });
  // The padded operations need no database: the security handler is never reached for them.
  const services = {
    document: doc,
    accounts: { authenticate: async () => undefined },
  } as unknown as Services;

  // Start: load the precompiled validators, build the dispatcher and the app, listen, first answer.
  started = performance.now();
  delete require.cache[validatorsFile];
  const validators = require(validatorsFile) as Record<string, unknown[]>;
  const dispatcher = await createApiMiddleware({
    services,
    document: doc,
    operations,
    validators,
    handlers: { ...handlers, [BENCH_HANDLER]: benchHandler },
  });
  const full = await listen(fullStack(dispatcher, process.env.LOG_LEVEL ?? 'info', services));
  // The service's default budgets, raised out of reach (all the load comes from one address).
  const abuse = loadAbuseConfig({});
  const unreachable = { points: 1_000_000_000, durationSecs: 1 };
  const limiter = new RequestLimiter({ ...abuse, budgets: { 'public-reads': unreachable, 'private-reads': unreachable, 'order-writes': unreachable, login: unreachable, registration: unreachable } });
  const limitedDispatcher = await createApiMiddleware({ services, document: doc, operations, validators, handlers: { ...handlers, [BENCH_HANDLER]: benchHandler }, limiter });
  const limited = await listen(fullStack(limitedDispatcher, process.env.LOG_LEVEL ?? 'info', services));
  const limitedAnswer = await fetch(`${limited.url}${templated}`);
  await limitedAnswer.arrayBuffer();
  if (limitedAnswer.headers.get('ratelimit-limit') !== String(unreachable.points)) throw new Error('the limited stack does not answer with its RateLimit headers');
  await expectStatus(`${full.url}${templated}`, 200);
  const startMs = performance.now() - started;

  // The dispatcher really routes and validates: these must not be 200.
  const item = templated.split('?')[0]!;
  await expectStatus(`${full.url}${item}?limit=0`, 400);
  await expectStatus(`${full.url}${item}?status=bogus`, 400);
  await expectStatus(`${full.url}${item}?limit=abc`, 400);
  await expectStatus(`${full.url}${literal}/`, 200);
  await expectStatus(`${full.url}${literal.replace('/items', '/nothing')}`, 404);
  await expectStatus(`${full.url}${literal}`, 405, { method: 'PATCH' });
  await expectStatus(`${full.url}${literal}`, 400, { method: 'POST', body: '{"size":-1}', headers: { 'content-type': 'application/json' } });

  const plainApp = new Koa();
  plainApp.use(constant);
  const plain = await listen(plainApp);
  const targets = [
    { name: `full stack, literal   GET ${literal}`, server: full, url: `${full.url}${literal}` },
    { name: `full stack, templated GET ${templated}`, server: full, url: `${full.url}${templated}` },
    { name: `full stack with rate limiting, templated GET`, server: limited, url: `${limited.url}${templated}` },
  ];
  if (process.env.BENCH_BREAKDOWN === '1') {
    const chain = await listen(fullStack(constant, process.env.LOG_LEVEL ?? 'info', services));
    targets.push({ name: '  chain without dispatcher, constant JSON', server: chain, url: `${chain.url}/` });
    const alone = new Koa();
    alone.use(dispatcher);
    const bare = await listen(alone);
    targets.push({ name: `  dispatcher alone, GET ${templated}`, server: bare, url: `${bare.url}${templated}` });
  }
  const plainMeasured: Measured[] = [];
  /** Each URL measured once a round, paired with plain Koa measured just before it or just after (in turn). */
  async function pairedRounds(urls: string[]): Promise<Array<{ rounds: Measured[]; plain: Measured[] }>> {
    const measured = urls.map(() => ({ rounds: [] as Measured[], plain: [] as Measured[] }));
    for (let round = 0; round < ROUNDS; round++) {
      for (const [i, url] of urls.entries()) {
        const plainFirst = (round + i) % 2 === 0;
        if (plainFirst) measured[i]!.plain.push(await load(`${plain.url}/`));
        measured[i]!.rounds.push(await load(url));
        if (!plainFirst) measured[i]!.plain.push(await load(`${plain.url}/`));
      }
    }
    for (const { plain: pairs } of measured) plainMeasured.push(...pairs);
    return measured;
  }
  const measured = await pairedRounds(targets.map((target) => target.url));
  for (const server of new Set(targets.map((target) => target.server.server))) await close(server);
  const rows = targets.map((target, i) => rowOf(target.name, measured[i]!.rounds, measured[i]!.plain));
  // Last: metrics (prom-client's default collectors) watch the whole process once made, so the other rows
  // run before they exist; the plain Koa measurements paired with this row run with them too (on plain Koa
  // they make no difference measurable here: the request path is what this row adds).
  const metrics = new ServiceMetrics();
  const metricsServer = await listen(fullStack(dispatcher, process.env.LOG_LEVEL ?? 'info', services, metrics));
  const [metricsMeasured] = await pairedRounds([`${metricsServer.url}${templated}`]);
  await close(metricsServer.server);
  await close(plain.server);
  const metricsRounds = metricsMeasured!.rounds;
  rows.splice(3, 0, rowOf(`full stack + metrics, templated GET`, metricsRounds, metricsMeasured!.plain));
  rows.unshift(rowOf('plain Koa, constant JSON', plainMeasured, plainMeasured));
  const answered = metricsRounds.reduce((sum, m) => sum + m.result.requests.total, 0);
  const counted = (await metrics.registry.getSingleMetric('dots_http_requests_total')!.get()).values.reduce((sum, value) => sum + value.value, 0);
  if (counted < answered) throw new Error(`metrics counted ${counted} requests, fewer than the ${answered} answered`);

  const width = Math.max(...rows.map((row) => row.name.length));
  const pad = (text: string, n: number) => text.padStart(n);
  const where = process.env.BENCH_WORKERS === '0' ? 'autocannon in the server thread' : 'autocannon in a worker thread';
  console.log(
    `\ndispatch benchmark: ${total} operations (${realCount} real + ${total - realCount} generated), ${CONNECTIONS} connections, ` +
      `${ROUNDS} round(s) of every row, ${DURATION} s per row after ${WARMUP} s warm-up, ${where}, Node ${process.version}\n`,
  );
  const percent = (share: number) => `${(share * 100).toFixed(0)}%`;
  console.log(`${'row'.padEnd(width)}  ${pad('req/s', 7)}  ${pad('p50 ms', 6)}  ${pad('p99 ms', 6)}  ${pad('% plain', 7)}  ${pad('server µs/req', 13)}  rounds (% plain)`);
  console.log('-'.repeat(width + 69));
  for (const row of rows) {
    console.log(
      `${row.name.padEnd(width)}  ${pad(row.rps.toFixed(0), 7)}  ${pad(String(row.p50), 6)}  ${pad(String(row.p99), 6)}  ${pad(percent(row.share), 7)}  ${pad(row.serverUs.toFixed(1), 13)}  ${row === rows[0] ? `(${row.rounds.length} measurements)` : row.shares.map(percent).join(' ')}`,
    );
  }
  const cost = rows[3]!.serverUs - rows[2]!.serverUs;
  const alone = await limiterCpuCost(limiter);
  console.log(`\nrate limiting: ${cost.toFixed(1)} µs of server time per request (limited templated row minus the templated row);`);
  console.log(`  the limiter alone: ${alone.oneKey.toFixed(2)} µs of CPU per request on one client, ${alone.manyKeys.toFixed(2)} µs over 100,000 clients (process CPU time, not disturbed by other load)`);
  console.log(`start to first answer (load validators, create dispatcher, listen, first 200): ${startMs.toFixed(0)} ms`);
  console.log(`(build step, not start: emitting the padded document's validators took ${(codegenMs / 1000).toFixed(1)} s)`);

  const failures: string[] = [];
  // Every full-stack row: both paths, with request budgets, with metrics (not the breakdown's rows).
  for (const { name, share, shares } of rows.slice(1, 5)) {
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

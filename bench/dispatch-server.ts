/**
 * One server of bench:dispatch, in a process of its own (forked by bench/dispatch.ts): one Koa app per
 * process, as the service runs. Apps sharing a process slow each other down: Koa's code and the stack's
 * see several shapes of context and V8 optimises them for all at once (about 2 µs of JavaScript a request
 * on the second app of a process), and metrics' collectors would watch every app.
 *
 * Argument: the kind of server (SERVER_KINDS). Environment: DISPATCH_DOCUMENT and DISPATCH_VALIDATORS, the
 * padded document (JSON) and its emitted validators (CommonJS), LOG_LEVEL (default info).
 * Messages (IPC): sends { listening: url, startMs } once it listens (startMs: from loading the validators
 * to listening); answers 'busy' with { busyMs }, its event loop's busy time since the previous 'busy', and
 * 'counted' with { counted }, the requests its metrics counted (metrics server only).
 */
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { performance } from 'node:perf_hooks';
import Koa from 'koa';
import type { OpenAPIV3 } from 'openapi-types';
import { listOperations } from '../codegen/operations.js';
import { buildApp, observedHttp } from '../src/app.js';
import type { ObservabilityConfig } from '../src/config.js';
import { handlers } from '../src/handlers/index.js';
import { createApiMiddleware, type DispatchEntry, type OperationImplementation } from '../src/http/api.js';
import { RequestLimiter } from '../src/http/rate-limit.js';
import { createLogger, logDestination } from '../src/logger.js';
import { ServiceMetrics } from '../src/observability/metrics.js';
import type { Services } from '../src/services.js';
import { listen } from './lib.js';

/**
 * plain: Koa answering a constant JSON; full: the service's stack (src/app.ts's buildApp) around the
 * dispatcher; limited: the same with request budgets; metrics: the same with request metrics; chain: the
 * stack around a constant answer; dispatcher: the dispatcher alone.
 */
export const SERVER_KINDS = ['plain', 'full', 'limited', 'metrics', 'chain', 'dispatcher'] as const;
export type ServerKind = (typeof SERVER_KINDS)[number];

/** The handler of the padded operations. */
export const BENCH_HANDLER = 'benchConstant';

/** A budget no client of the benchmark reaches (all its load comes from one address), per second. */
export const UNREACHABLE_BUDGET = { points: 1_000_000_000, durationSecs: 1 };

/** The service's request budgets, every one raised to UNREACHABLE_BUDGET. */
export function unreachableLimiter(): RequestLimiter {
  const budget = UNREACHABLE_BUDGET;
  return new RequestLimiter({ processes: 1, budgets: { 'public-reads': budget, 'private-reads': budget, 'order-writes': budget, login: budget, registration: budget } });
}

/** The default settings of the layers around the dispatcher (no CORS, no metrics token). */
const OBSERVABILITY: ObservabilityConfig = { corsOrigins: [], catalogueMaxAgeSecs: 5, metricsPort: undefined, metricsToken: undefined, shutdownDelaySecs: 0 };

const constant: Koa.Middleware = (ctx) => {
  ctx.body = { id: 'list', ok: true };
};

const benchHandler: OperationImplementation = async (request) => ({
  status: 200,
  body: { id: (request.params as { id?: string } | undefined)?.id ?? 'list', ok: true },
});

async function serverApp(kind: ServerKind): Promise<{ app: Koa; metrics?: ServiceMetrics }> {
  if (kind === 'plain') return { app: new Koa().use(constant) };
  const document = JSON.parse(readFileSync(process.env.DISPATCH_DOCUMENT!, 'utf8')) as OpenAPIV3.Document;
  const validators = createRequire(import.meta.url)(process.env.DISPATCH_VALIDATORS!) as Record<string, unknown[]>;
  // Every field of the generated table (roles, clamps, budgets, API key scopes), as the service's.
  const operations: Record<string, DispatchEntry> = {};
  for (const op of listOperations(document)) operations[op.operationId] = op;
  // The padded operations need no database: the security handler is never reached for them.
  const services = { document, accounts: { authenticate: async () => undefined } } as unknown as Services;
  const limiter = kind === 'limited' ? unreachableLimiter() : undefined;
  const dispatcher = await createApiMiddleware({ services, document, operations, validators, handlers: { ...handlers, [BENCH_HANDLER]: benchHandler }, limiter });
  if (kind === 'dispatcher') return { app: new Koa().use(dispatcher) };
  const metrics = kind === 'metrics' ? new ServiceMetrics() : undefined;
  // What createApp serves: logging at LOG_LEVEL (to /dev/null), HTTP caching, request metrics when on.
  const logger = createLogger(process.env.LOG_LEVEL ?? 'info', logDestination('/dev/null'));
  return { app: buildApp(logger, kind === 'chain' ? constant : dispatcher, observedHttp(services, OBSERVABILITY, metrics)), metrics };
}

async function main(): Promise<void> {
  const kind = process.argv[2] as ServerKind;
  if (!SERVER_KINDS.includes(kind)) throw new Error(`unknown server kind ${kind}`);
  const started = performance.now();
  const { app, metrics } = await serverApp(kind);
  const { url } = await listen(app);
  process.send!({ listening: url, startMs: performance.now() - started });
  let since = performance.eventLoopUtilization();
  process.on('message', (message) => {
    if (message === 'busy') {
      const now = performance.eventLoopUtilization();
      process.send!({ busyMs: performance.eventLoopUtilization(now, since).active });
      since = now;
    } else if (message === 'counted') {
      void metrics!.registry
        .getSingleMetric('dots_http_requests_total')!
        .get()
        .then((metric) => process.send!({ counted: metric.values.reduce((sum, value) => sum + value.value, 0) }));
    }
  });
  // the benchmark's end (or its failure) ends the server
  process.on('disconnect', () => process.exit(0));
}

// Only when forked by bench/dispatch.ts (with an IPC channel): that file imports this one's constants.
if (process.send) {
  main().catch((error: unknown) => {
    console.error(`bench:dispatch server ${process.argv[2]} failed:`, error);
    process.exit(1);
  });
}

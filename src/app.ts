import { createHash, timingSafeEqual } from 'node:crypto';
import Koa, { type Middleware } from 'koa';
import { handlers } from './handlers/index.js';
import { createApiMiddleware } from './http/api.js';
import { httpCaching } from './http/conditional.js';
import { cors } from './http/cors.js';
import { sendError } from './http/errors.js';
import { docsAssets, requestLifecycle, type LifecycleOptions } from './http/middleware.js';
import { RequestLimiter } from './admission/rate-limit.js';
import { METRICS_CONTENT_TYPE, type ServiceMetrics } from './observability/metrics.js';
import type { AbuseConfig, ObservabilityConfig } from './config.js';
import type { Logger } from './logger.js';
import type { Services } from './services.js';

/**
 * request -> lifecycle (id, errors, log) -> CORS -> docs assets -> OpenAPI dispatch (budget, token, role, JSON
 * body, validation) -> handler. Without `abuse` (settings), requests are not rate limited; without
 * `observability`, no CORS, caching or metrics.
 */
export async function createApp(options: {
  services: Services;
  logger: Logger;
  abuse?: AbuseConfig;
  observability?: ObservabilityConfig;
  metrics?: ServiceMetrics;
}): Promise<Koa> {
  const { abuse } = options;
  const limiter = abuse?.rateLimits ? new RequestLimiter(abuse) : undefined;
  const dispatcher = await createApiMiddleware({
    document: options.services.document,
    handlers,
    services: options.services,
    limiter,
    bodyTimeoutMs: abuse?.requestBodyTimeoutMs,
    clients: abuse?.clients,
  });
  return buildApp(options.logger, dispatcher, options.observability && observedHttp(options.services, options.observability, options.metrics));
}

/** What the layers around the dispatcher add: CORS ahead of it, caching and metrics once a response is ready. */
export interface HttpExtras extends LifecycleOptions {
  before?: Middleware[];
}

/** The Koa app around a dispatcher: what createApp serves, and what the dispatch benchmark measures. */
export function buildApp(logger: Logger, dispatcher: Middleware, extras: HttpExtras = {}): Koa {
  const app = new Koa();
  app.proxy = false;
  // Errors are answered and logged by requestLifecycle; Koa's own printer would log them twice.
  app.silent = true;
  app.use(requestLifecycle(logger, extras));
  for (const layer of extras.before ?? []) app.use(layer);
  // The docs assets answer only GET; every other request passes straight through to the dispatcher, which
  // reads a body only for an operation that takes one, once its budget, token and role checks have passed.
  app.use(docsAssets());
  app.use(dispatcher);
  return app;
}

const digest = (text: string) => createHash('sha256').update(text).digest();

/** GET /metrics on the main port, for requests bearing METRICS_TOKEN (compared in constant time). */
function metricsEndpoint(metrics: ServiceMetrics, token: string): Middleware {
  const expected = digest(token);
  return async (ctx, next) => {
    const { request } = ctx;
    if (request.path !== '/metrics' || request.method !== 'GET') {
      await next();
      return;
    }
    const match = /^Bearer +(\S+) *$/i.exec(request.headers.authorization ?? '');
    if (!match || !timingSafeEqual(digest(match[1]!), expected)) {
      ctx.res.setHeader('WWW-Authenticate', 'Bearer');
      return sendError(ctx, 'unauthorized', 'GET /metrics needs METRICS_TOKEN as a bearer token');
    }
    ctx.res.setHeader('Content-Type', METRICS_CONTENT_TYPE);
    ctx.res.setHeader('Cache-Control', 'no-store');
    ctx.response.body = await metrics.registry.metrics();
  };
}

/**
 * The service's layers around the dispatcher: GET /metrics with METRICS_TOKEN, CORS when CORS_ORIGINS is
 * set, HTTP caching always, request metrics when metrics are on.
 */
export function observedHttp(services: Services, config: ObservabilityConfig, metrics: ServiceMetrics | undefined): HttpExtras {
  const caching = httpCaching(services.document, config.catalogueMaxAgeSecs);
  const before: Middleware[] = [];
  if (metrics && config.metricsToken) before.push(metricsEndpoint(metrics, config.metricsToken));
  if (config.corsOrigins.length > 0) before.push(cors(services.document, config.corsOrigins));
  return {
    before,
    finish: metrics
      ? (ctx, ms) => {
          caching(ctx);
          metrics.observeRequest(ctx, ms);
        }
      : caching,
  };
}

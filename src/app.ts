import Koa, { type Middleware } from 'koa';
import { bodyParser } from '@koa/bodyparser';
import { handlers } from './handlers/index.js';
import { createApiMiddleware } from './http/api.js';
import { docsAssets, requestLifecycle, type LifecycleOptions } from './http/middleware.js';
import { observedHttp } from './observability/http.js';
import type { ServiceMetrics } from './observability/metrics.js';
import type { ObservabilityConfig } from './config.js';
import type { Logger } from './logger.js';
import type { Services } from './services.js';

const BODY_LIMIT = '512kb';
/** Batch cancel sends its ids in a DELETE body. */
const BODY_METHODS = ['POST', 'PUT', 'PATCH', 'DELETE'];

/** request -> lifecycle (id, errors, log) -> JSON body or docs assets -> OpenAPI dispatch -> handler. */
export async function createApp(options: { services: Services; logger: Logger; observability?: ObservabilityConfig; metrics?: ServiceMetrics }): Promise<Koa> {
  const dispatcher = await createApiMiddleware({ document: options.services.document, handlers, services: options.services });
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
  const parseBody = bodyParser({ enableTypes: ['json'], jsonLimit: BODY_LIMIT, parsedMethods: BODY_METHODS });
  const serveDocsAssets = docsAssets();
  // The body parser's own first check, made before entering it (a request without a body skips an async
  // step); the docs assets answer only GET, so the two share one layer, each Koa layer costing more than
  // either check. (ctx.request: see requestLifecycle)
  app.use((ctx, next) => (BODY_METHODS.includes(ctx.request.method.toUpperCase()) ? parseBody(ctx, next) : serveDocsAssets(ctx, next)));
  app.use(dispatcher);
  return app;
}

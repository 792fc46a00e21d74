import Koa, { type Middleware } from 'koa';
import { bodyParser } from '@koa/bodyparser';
import { handlers } from './handlers/index.js';
import { createApiMiddleware } from './http/api.js';
import { docsAssets, requestLifecycle } from './http/middleware.js';
import type { Logger } from './logger.js';
import type { Services } from './services.js';

const BODY_LIMIT = '512kb';
/** Batch cancel sends its ids in a DELETE body. */
const BODY_METHODS = ['POST', 'PUT', 'PATCH', 'DELETE'];

/** request -> lifecycle (id, errors, log) -> JSON body or docs assets -> OpenAPI dispatch -> handler. */
export async function createApp(options: { services: Services; logger: Logger }): Promise<Koa> {
  return buildApp(options.logger, await createApiMiddleware({ document: options.services.document, handlers, services: options.services }));
}

/** The Koa app around a dispatcher: what createApp serves, and what the dispatch benchmark measures. */
export function buildApp(logger: Logger, dispatcher: Middleware): Koa {
  const app = new Koa();
  app.proxy = false;
  // Errors are answered and logged by requestLifecycle; Koa's own printer would log them twice.
  app.silent = true;
  app.use(requestLifecycle(logger));
  const parseBody = bodyParser({ enableTypes: ['json'], jsonLimit: BODY_LIMIT, parsedMethods: BODY_METHODS });
  const serveDocsAssets = docsAssets();
  // The body parser's own first check, made before entering it (a request without a body skips an async
  // step); the docs assets answer only GET, so the two share one layer, each Koa layer costing more than
  // either check. (ctx.request: see requestLifecycle)
  app.use((ctx, next) => (BODY_METHODS.includes(ctx.request.method.toUpperCase()) ? parseBody(ctx, next) : serveDocsAssets(ctx, next)));
  app.use(dispatcher);
  return app;
}

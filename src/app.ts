import Koa, { type Middleware } from 'koa';
import type { AbuseConfig } from './config.js';
import { handlers } from './handlers/index.js';
import { createApiMiddleware } from './http/api.js';
import { docsAssets, requestLifecycle } from './http/middleware.js';
import { RequestLimiter } from './http/rate-limit.js';
import type { Logger } from './logger.js';
import type { Services } from './services.js';

/**
 * request -> lifecycle (id, errors, log) -> docs assets -> OpenAPI dispatch (budget, token, role, JSON body,
 * validation) -> handler. Without `abuse` (settings), requests are not rate limited.
 */
export async function createApp(options: { services: Services; logger: Logger; abuse?: AbuseConfig }): Promise<Koa> {
  const { abuse } = options;
  const limiter = abuse?.rateLimits ? new RequestLimiter(abuse) : undefined;
  return buildApp(
    options.logger,
    await createApiMiddleware({ document: options.services.document, handlers, services: options.services, limiter, bodyTimeoutMs: abuse?.requestBodyTimeoutMs, trustProxy: abuse?.trustProxy }),
  );
}

/** The Koa app around a dispatcher: what createApp serves, and what the dispatch benchmark measures. */
export function buildApp(logger: Logger, dispatcher: Middleware): Koa {
  const app = new Koa();
  app.proxy = false;
  // Errors are answered and logged by requestLifecycle; Koa's own printer would log them twice.
  app.silent = true;
  app.use(requestLifecycle(logger));
  // The docs assets answer only GET; every other request passes straight through to the dispatcher, which
  // reads a body only for an operation that takes one, once its budget, token and role checks have passed.
  app.use(docsAssets());
  app.use(dispatcher);
  return app;
}

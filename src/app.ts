import Koa from 'koa';
import { bodyParser } from '@koa/bodyparser';
import { handlers } from './handlers/index.js';
import { createApiMiddleware } from './http/api.js';
import { docsAssets, requestLifecycle } from './http/middleware.js';
import type { Logger } from './logger.js';
import type { Services } from './services.js';

export const BODY_LIMIT = '512kb';

/** request -> lifecycle (id, errors, log) -> docs assets -> JSON body -> OpenAPI dispatch -> handler. */
export async function createApp(options: { services: Services; logger: Logger }): Promise<Koa> {
  const app = new Koa();
  app.proxy = false;
  // Errors are answered and logged by requestLifecycle; Koa's own printer would log them twice.
  app.silent = true;
  app.use(requestLifecycle(options.logger));
  app.use(docsAssets());
  app.use(
    bodyParser({
      enableTypes: ['json'],
      jsonLimit: BODY_LIMIT,
      // Batch cancel sends its ids in a DELETE body.
      parsedMethods: ['POST', 'PUT', 'PATCH', 'DELETE'],
    }),
  );
  app.use(await createApiMiddleware({ document: options.services.document, handlers, services: options.services }));
  return app;
}

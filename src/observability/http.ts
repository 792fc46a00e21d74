import { createHash, timingSafeEqual } from 'node:crypto';
import type { Middleware } from 'koa';
import type { HttpExtras } from '../app.js';
import type { ObservabilityConfig } from '../config.js';
import { cors } from '../http/cors.js';
import { httpCaching } from '../http/conditional.js';
import { sendError } from '../http/errors.js';
import type { Services } from '../services.js';
import { METRICS_CONTENT_TYPE, type ServiceMetrics } from './metrics.js';

const digest = (text: string) => createHash('sha256').update(text).digest();

/** GET /metrics on the main port, for requests bearing METRICS_TOKEN (compared in constant time). */
function metricsEndpoint(metrics: ServiceMetrics, token: string): Middleware {
  const expected = digest(token);
  return async (ctx, next) => {
    const { request } = ctx;
    if (request.path !== '/metrics' || request.method !== 'GET') return next();
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

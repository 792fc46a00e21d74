import { randomUUID } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import path from 'node:path';
// the module's: the global `performance` is an accessor, looked up through a getter on every use
import { performance } from 'node:perf_hooks';
import type { Context, Middleware } from 'koa';
import { AccessLog, type Logger } from '../logger.js';
import { presentError } from './errors.js';

const REQUEST_ID = /^[A-Za-z0-9._:-]{1,128}$/;

/**
 * Outermost layer: request id, error envelope for anything thrown below, exact JSON content type, one
 * access-log line per request (never headers or bodies, so no credential is ever logged).
 *
 * The middleware on every request's path reads ctx.request and ctx.response, not Koa's ctx.* shortcuts:
 * those delegates all share one property access (megamorphic), a slow lookup each time.
 */
export function requestLifecycle(logger: Logger): Middleware {
  const access = new AccessLog(logger);
  return async (ctx, next) => {
    const { request, response } = ctx;
    const incoming = request.get('x-request-id');
    const requestId = REQUEST_ID.test(incoming) ? incoming : randomUUID();
    ctx.state.requestId = requestId;
    // Koa's ctx.set builds arrays for every header it sets; nothing has been sent yet.
    ctx.res.setHeader('X-Request-Id', requestId);
    const started = performance.now();
    try {
      await next();
    } catch (error) {
      if (presentError(ctx, error) === 'unexpected') logger.error({ err: error, requestId }, 'request failed');
    }
    // JSON carries no charset parameter (RFC 8259); contract tools compare the media type exactly.
    const type = response.get('Content-Type');
    if (typeof type === 'string' && type.startsWith('application/json;')) response.set('Content-Type', 'application/json');
    if (access.enabled) {
      const ms = performance.now() - started;
      access.write({ requestId, method: request.method, path: request.path, status: response.status, ms: Math.round(ms * 100) / 100 });
    }
  };
}

const require = createRequire(import.meta.url);
const SWAGGER_UI_DIR = path.dirname(require.resolve('swagger-ui-dist/package.json'));
const DOCS_ASSETS: Record<string, { file?: string; text?: string; type: string }> = {
  'swagger-ui.css': { file: 'swagger-ui.css', type: 'text/css' },
  'swagger-ui-bundle.js': { file: 'swagger-ui-bundle.js', type: 'application/javascript' },
  'docs-init.js': {
    text: "window.ui = SwaggerUIBundle({ url: '/openapi.json', dom_id: '#swagger-ui', deepLinking: true });\n",
    type: 'application/javascript',
  },
};

/** The static files of the /docs page, from the swagger-ui-dist package (no CDN). */
export function docsAssets(): Middleware {
  const cache = new Map<string, string | Buffer>();
  async function serve(ctx: Context, name: string, asset: (typeof DOCS_ASSETS)[string]): Promise<void> {
    if (!cache.has(name)) cache.set(name, asset.text ?? (await readFile(path.join(SWAGGER_UI_DIR, asset.file!))));
    ctx.set('Cache-Control', 'public, max-age=3600');
    ctx.type = asset.type;
    ctx.body = cache.get(name);
  }
  // Not async itself: every other request passes straight through.
  return (ctx, next) => {
    const { request } = ctx;
    if (request.method !== 'GET' || !request.path.startsWith('/docs/assets/')) return next();
    const name = request.path.slice('/docs/assets/'.length);
    const asset = Object.hasOwn(DOCS_ASSETS, name) ? DOCS_ASSETS[name] : undefined;
    return asset ? serve(ctx, name, asset) : next();
  };
}

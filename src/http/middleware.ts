import { randomFillSync, randomUUID } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import path from 'node:path';
// the module's: the global `performance` is an accessor, looked up through a getter on every use
import { performance } from 'node:perf_hooks';
import type { Context, Middleware } from 'koa';
import { AccessLog, type Logger } from '../logger.js';
import { presentError } from './errors.js';

const REQUEST_ID = /^[A-Za-z0-9._:-]{1,128}$/;
/** W3C Trace Context `traceparent`: version 00 to fe, trace id, parent id, flags (lower-case hex). */
const TRACEPARENT = /^(?!ff)[0-9a-f]{2}-(?!0{32})([0-9a-f]{32})-(?!0{16})[0-9a-f]{16}-[0-9a-f]{2}(-|$)/;

const TRACE_ID_BYTES = 16;
const NO_TRACE_ID = '0'.repeat(2 * TRACE_ID_BYTES);
/** Random bytes for new trace ids, drawn 256 ids at a time (one call to the generator instead of one per request). */
const traceEntropy = Buffer.alloc(256 * TRACE_ID_BYTES);
let traceEntropyUsed = traceEntropy.length;

/** A new random trace id: 32 hex digits, never all zeros (which W3C Trace Context reserves for "none"). */
function newTraceId(): string {
  if (traceEntropyUsed === traceEntropy.length) {
    randomFillSync(traceEntropy);
    traceEntropyUsed = 0;
  }
  const start = traceEntropyUsed;
  traceEntropyUsed += TRACE_ID_BYTES;
  const id = traceEntropy.toString('hex', start, traceEntropyUsed);
  return id === NO_TRACE_ID ? newTraceId() : id;
}

/** The trace id of a well-formed `traceparent`, or a new one (32 hex digits) when it is absent or malformed. */
export function traceIdOf(traceparent: string | string[] | undefined): string {
  const match = typeof traceparent === 'string' ? TRACEPARENT.exec(traceparent.trim()) : null;
  return match ? match[1]! : newTraceId();
}

export interface LifecycleOptions {
  /** Called once the response is ready, before it is sent and logged (caching, metrics); `ms` since the request came. */
  finish?: (ctx: Context, ms: number) => void;
}

/**
 * Outermost layer: request id, trace id (W3C traceparent), error envelope for anything thrown below, exact
 * JSON content type, one access-log line per request with the client address and the authenticated account
 * (never headers or bodies, so no credential is ever logged).
 *
 * The middleware on every request's path reads ctx.request and ctx.response, not Koa's ctx.* shortcuts:
 * those delegates all share one property access (megamorphic), a slow lookup each time.
 */
export function requestLifecycle(logger: Logger, options: LifecycleOptions = {}): Middleware {
  const access = new AccessLog(logger);
  const { finish } = options;
  return async (ctx, next) => {
    const { request, response } = ctx;
    const incoming = request.get('x-request-id');
    const requestId = REQUEST_ID.test(incoming) ? incoming : randomUUID();
    ctx.state.requestId = requestId;
    const traceId = traceIdOf(request.headers.traceparent);
    ctx.state.traceId = traceId;
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
    const ms = performance.now() - started;
    finish?.(ctx, ms);
    if (access.enabled) {
      const { state } = ctx;
      access.write({
        requestId,
        traceId,
        method: request.method,
        path: request.path,
        status: response.status,
        ms: Math.round(ms * 100) / 100,
        client: ctx.req.socket.remoteAddress,
        accountId: state.accountId as string | undefined,
        apiKeyId: state.apiKeyId as string | undefined,
      });
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

import type { Context } from 'koa';
import { DomainError, type ErrorDetail } from '../domain/errors.js';
import { STATUS_BY_CODE, type ErrorCode } from '../presenters/errors.js';

/**
 * An object or array as the JSON body Koa would send, serialised here once: Koa sends a string body as it
 * is and measures it once, where an object body takes its JSON path (type lookup, Content-Length removed,
 * the type re-read, then stringified and measured again in respond). Same bytes, and the type Koa would
 * give (keeping a JSON type already set), without the charset the request lifecycle strips.
 */
export function sendJson(ctx: Context, body: object): void {
  // (ctx.res's own: Koa's ctx.set builds arrays for every header it sets; nothing has been sent yet)
  if (!ctx.res.hasHeader('Content-Type') || !/\bjson\b/i.test(ctx.response.type)) ctx.res.setHeader('Content-Type', 'application/json');
  ctx.response.body = JSON.stringify(body);
}

export function sendError(ctx: Context, code: ErrorCode, message: string, details?: ErrorDetail[]): void {
  ctx.response.status = STATUS_BY_CODE[code];
  sendJson(ctx, { error: details && details.length > 0 ? { code, message, details } : { code, message } });
}

/** A refusal of the HTTP layer itself (body, media type, budget), with the headers it answers with. */
export class HttpError extends Error {
  constructor(
    readonly code: ErrorCode,
    message: string,
    readonly headers: Record<string, string> = {},
  ) {
    super(message);
    this.name = 'HttpError';
  }
}

/** Errors thrown by Koa middleware (body parser) carry an HTTP status; map the expected ones. */
function fromHttpError(error: { status?: number; type?: string; message?: string }): [ErrorCode, string] | undefined {
  if (error.status === 413) return ['payload_too_large', 'request body too large (limit 512 KiB)'];
  if (error.status === 415) return ['invalid_request', 'request body must be application/json'];
  if (error.status === 400) return ['invalid_json', `request body is not valid JSON`];
  return undefined;
}

/** Turns anything thrown below into the error envelope; unexpected errors are logged and answered 500. */
export function presentError(ctx: Context, error: unknown): 'expected' | 'unexpected' {
  if (error instanceof DomainError) {
    if (error.retryAfterSecs !== undefined) ctx.set('Retry-After', String(error.retryAfterSecs));
    sendError(ctx, error.code, error.message, error.details);
    return 'expected';
  }
  if (error instanceof HttpError) {
    ctx.set(error.headers);
    sendError(ctx, error.code, error.message);
    return 'expected';
  }
  const mapped = error && typeof error === 'object' ? fromHttpError(error as never) : undefined;
  if (mapped) {
    sendError(ctx, mapped[0], mapped[1]);
    return 'expected';
  }
  sendError(ctx, 'internal', 'internal error');
  return 'unexpected';
}

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

/** Seconds a client is told to wait when the database cannot be reached (an embedded one restarts within seconds). */
const DATABASE_RETRY_AFTER_SECS = 5;
/** Node's codes for a connection that could not be made or was cut. */
const CONNECTION_ERRORS = new Set(['ECONNREFUSED', 'ECONNRESET', 'EPIPE', 'ETIMEDOUT', 'ENOTFOUND', 'EHOSTUNREACH', 'ENETUNREACH', 'EAI_AGAIN']);
/** PostgreSQL's SQLSTATEs of a server shutting down, crashed or starting (class 08: connection exceptions). */
const SERVER_UNAVAILABLE = new Set(['57P01', '57P02', '57P03', '53300']);
/** pg's and Knex's messages for a connection lost, refused or never obtained. */
const LOST_CONNECTION = /^(Connection terminated|Client has encountered a connection error|Timeout acquiring a connection|connect ECONNREFUSED)/;

/**
 * Whether the database could not be reached (refused, cut, shutting down or recovering, no connection to be
 * had): the request is then answered 503 with Retry-After, not 500; the operation may be tried again.
 */
export function isDatabaseUnreachable(error: unknown): boolean {
  for (let current = error, depth = 0; current instanceof Error && depth < 5; current = current.cause, depth += 1) {
    const code = (current as { code?: unknown }).code;
    if (typeof code === 'string' && (CONNECTION_ERRORS.has(code) || SERVER_UNAVAILABLE.has(code) || code.startsWith('08'))) return true;
    if (current.name === 'KnexTimeoutError' || LOST_CONNECTION.test(current.message)) return true;
    if (current instanceof AggregateError && current.errors.some(isDatabaseUnreachable)) return true;
  }
  return false;
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
  const mapped = error && typeof error === 'object' ? fromHttpError(error) : undefined;
  if (mapped) {
    sendError(ctx, mapped[0], mapped[1]);
    return 'expected';
  }
  if (isDatabaseUnreachable(error)) {
    ctx.set('Retry-After', String(DATABASE_RETRY_AFTER_SECS));
    sendError(ctx, 'unavailable', 'the database cannot be reached: try again later');
    return 'expected';
  }
  sendError(ctx, 'internal', 'internal error');
  return 'unexpected';
}

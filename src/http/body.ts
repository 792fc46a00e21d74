import type { Context } from 'koa';
import coBody from 'co-body';
import { clip } from '../domain/errors.js';
import { HttpError } from './errors.js';

/** Request bodies are limited to this (413 above it). */
export const BODY_LIMIT_BYTES = 512 * 1024;

export interface BodyOptions {
  /** A body not received in full within this time is answered 408 and its connection closed. */
  timeoutMs: number;
}

/**
 * The JSON body of an operation that takes one, read only once the request has passed its budget, token
 * and role checks (so a refused request costs no body reading): no body at all reads as `{}` (validation
 * then names what is missing); a body of another media type is 415; a corrupt compressed body 400; a body
 * over the limit 413; a body that does not arrive in time 408 (its connection is closed, the rest unread).
 * With the value, the body's text as received (decompressed; `''` when there is none), which an order-book
 * signature covers.
 */
export async function readJsonBodyAndText(ctx: Context, options: BodyOptions): Promise<{ value: unknown; text: string }> {
  // (type-is counts `Content-Length: 0` as a body)
  const length = ctx.req.headers['content-length'];
  if (ctx.req.headers['transfer-encoding'] === undefined && (length === undefined || length === '0')) return { value: {}, text: '' };
  const type = ctx.request.is('json', '+json');
  if (type === null) return { value: {}, text: '' };
  if (type === false) {
    throw new HttpError('unsupported_media_type', `request body must be application/json, got '${clip(ctx.request.get('Content-Type') || 'no Content-Type', 60)}'`);
  }
  let timer: NodeJS.Timeout | undefined;
  const reading = coBody.json(ctx.req, { limit: BODY_LIMIT_BYTES, strict: true, returnRawBody: true }).then((read: { parsed: unknown; raw: string }) => ({ value: read.parsed, text: read.raw }));
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new HttpError('request_timeout', `the request body did not arrive within ${options.timeoutMs} ms`, { Connection: 'close' })), options.timeoutMs);
  });
  try {
    return await Promise.race([reading, timeout]);
  } catch (error) {
    // The read still running (timed out) ends when the connection closes.
    reading.catch(() => undefined);
    throw bodyError(ctx, error);
  } finally {
    clearTimeout(timer);
  }
}

function bodyError(ctx: Context, error: unknown): unknown {
  if (error instanceof HttpError) return error;
  const e = error as { status?: number; type?: string; code?: string; errno?: number; message?: string };
  if (e.status === 413) return new HttpError('payload_too_large', `request body too large (limit ${BODY_LIMIT_BYTES / 1024} KiB)`);
  // inflation: an encoding it does not know
  if (e.status === 415) return new HttpError('unsupported_media_type', `Content-Encoding '${clip(ctx.request.get('Content-Encoding'), 60)}' is not supported (gzip, deflate, br or identity)`);
  // zlib: a corrupt or truncated compressed body
  if (typeof e.code === 'string' && typeof e.errno === 'number' && (e.code.startsWith('Z_') || e.code.startsWith('ERR__ERROR_') || e.code.startsWith('ERR_BROTLI'))) {
    return new HttpError('invalid_request', `request body is not valid ${clip(ctx.request.get('Content-Encoding'), 60)} data`);
  }
  if (e.type === 'request.aborted' || e.type === 'request.size.invalid') return new HttpError('invalid_request', 'request body ended before its declared length');
  if (e.status === 400) return new HttpError('invalid_json', 'request body is not valid JSON');
  return error;
}

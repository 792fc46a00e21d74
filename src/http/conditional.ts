import etag from 'etag';
import type { Context } from 'koa';
import { operationFactsOf } from './operation-facts.js';

type CachePolicy = 'catalogue' | 'private';

/**
 * HTTP caching by operation, applied once the response is ready (from the request lifecycle):
 * - public catalogue reads (the operations that document 304: codegen gives it to every public GET tagged
 *   catalogue or compat) answering 200 get a strong `ETag` of their body and
 *   `Cache-Control: public, max-age=<CATALOGUE_CACHE_MAX_AGE_SECS>` (`public, no-cache` at 0: stored, but
 *   revalidated each time); a request whose `If-None-Match` names that ETag is answered 304 without a body;
 * - operations that need a token get `Cache-Control: private, no-store` on every answer.
 * Others are left as their handlers answer them.
 */
export function httpCaching(document: object, maxAgeSecs: number): (ctx: Context) => void {
  const policies = new Map<string, CachePolicy>();
  for (const operation of operationFactsOf(document)) {
    if (!operation.public) policies.set(operation.operationId, 'private');
    else if (operation.revalidates) policies.set(operation.operationId, 'catalogue');
  }
  const publicControl = maxAgeSecs > 0 ? `public, max-age=${maxAgeSecs}` : 'public, no-cache';
  return (ctx) => {
    const operationId = ctx.state.operationId as string | undefined;
    if (operationId === undefined) return;
    const policy = policies.get(operationId);
    if (policy === undefined) return;
    const { response } = ctx;
    if (policy === 'private') {
      ctx.res.setHeader('Cache-Control', 'private, no-store');
      return;
    }
    const body: unknown = response.body;
    if (response.status !== 200 || (typeof body !== 'string' && !Buffer.isBuffer(body))) return;
    const tag = etag(body);
    ctx.res.setHeader('ETag', tag);
    ctx.res.setHeader('Cache-Control', publicControl);
    if (noneMatch(ctx.request.headers['if-none-match'], tag)) response.status = 304;
  };
}

/**
 * RFC 9110 If-None-Match on a GET: `*`, or a list naming the ETag (weak comparison). Evaluated whatever the
 * request's Cache-Control says: `no-cache` there is for caches on the way (and fetch() adds it to every
 * request with a conditional header), not for the origin server (so not Koa's ctx.fresh, which gives up on it).
 */
export function noneMatch(header: string | undefined, tag: string): boolean {
  if (header === undefined) return false;
  const trimmed = header.trim();
  if (trimmed === '*') return true;
  const opaque = tag.startsWith('W/') ? tag.slice(2) : tag;
  for (const candidate of trimmed.split(',')) {
    const value = candidate.trim();
    if ((value.startsWith('W/') ? value.slice(2) : value) === opaque) return true;
  }
  return false;
}

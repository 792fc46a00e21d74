import type { Middleware } from 'koa';
import { operationFactsOf, PathMatcher, type OperationFacts } from './operation-facts.js';

/** Request headers the service reads on any operation, besides each operation's own. */
const COMMON_HEADERS = ['x-request-id', 'traceparent', 'tracestate'];
/** Response headers a page may read (besides the CORS-safelisted ones). */
const EXPOSED_HEADERS = 'ETag, X-Request-Id, Retry-After';
/** How long a browser may keep a preflight's answer. */
const PREFLIGHT_MAX_AGE_SECS = 600;

interface PathRules {
  /** method -> what a request may send, for an origin listed by name. */
  listed: Map<string, Set<string>>;
  /** The same, for any origin when `*` is allowed: public reads only. */
  anyOrigin: Map<string, Set<string>>;
}

function headersOf(operation: OperationFacts): Set<string> {
  const headers = new Set([...COMMON_HEADERS, ...operation.headers]);
  if (!operation.public) headers.add('authorization');
  if (operation.hasBody) headers.add('content-type');
  if (operation.method === 'GET') headers.add('if-none-match');
  return headers;
}

/** `*` covers reads that need no token; everything else only origins listed by name. */
const isPublicRead = (operation: OperationFacts) => operation.public && operation.method === 'GET';

function rulesByPath(document: object): PathMatcher<PathRules> {
  const byPath = new Map<string, PathRules>();
  for (const operation of operationFactsOf(document)) {
    let rules = byPath.get(operation.path);
    if (!rules) byPath.set(operation.path, (rules = { listed: new Map(), anyOrigin: new Map() }));
    rules.listed.set(operation.method, headersOf(operation));
    if (isPublicRead(operation)) rules.anyOrigin.set(operation.method, headersOf(operation));
  }
  return new PathMatcher(byPath);
}

/**
 * Cross-origin requests from browsers (CORS_ORIGINS). An origin listed by name may call every operation;
 * with `*`, any other origin may call the public reads (GET operations that need no token), answered with
 * `Access-Control-Allow-Origin: *`. Credentials (cookies) are never allowed: the API takes its token in the
 * Authorization header, which listed origins may send. Preflights (OPTIONS with Access-Control-Request-Method)
 * are answered 204 for the methods and headers the document gives the path; a preflight the rules refuse
 * goes on to the dispatcher (405), without CORS headers. Requests without an Origin header pass untouched.
 */
export function cors(document: object, origins: readonly string[]): Middleware {
  const listed = new Set(origins.filter((origin) => origin !== '*'));
  const anyOrigin = origins.includes('*');
  const paths = rulesByPath(document);
  return (ctx, next) => {
    const { request } = ctx;
    const origin = request.headers.origin;
    if (typeof origin !== 'string') return next();
    const rules = paths.match(request.path);
    const res = ctx.res;
    // caches keep answers per origin
    res.setHeader('Vary', 'Origin');
    if (!rules) return next();
    const byName = listed.has(origin);
    const allowed = byName ? rules.listed : anyOrigin ? rules.anyOrigin : undefined;
    if (!allowed || allowed.size === 0) return next();
    const allowOrigin = byName ? origin : '*';

    const requestedMethod = request.headers['access-control-request-method'];
    if (request.method === 'OPTIONS' && typeof requestedMethod === 'string') {
      const headers = allowed.get(requestedMethod.toUpperCase());
      if (!headers) return next();
      res.setHeader('Access-Control-Allow-Origin', allowOrigin);
      res.setHeader('Access-Control-Allow-Methods', [...allowed.keys()].join(', '));
      res.setHeader('Access-Control-Allow-Headers', [...headers].join(', '));
      res.setHeader('Access-Control-Max-Age', String(PREFLIGHT_MAX_AGE_SECS));
      ctx.response.status = 204;
      return undefined;
    }
    if (allowed.has(request.method === 'HEAD' ? 'GET' : request.method)) {
      res.setHeader('Access-Control-Allow-Origin', allowOrigin);
      res.setHeader('Access-Control-Expose-Headers', EXPOSED_HEADERS);
    }
    return next();
  };
}

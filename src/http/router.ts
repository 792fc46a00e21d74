/**
 * The service's OpenAPI router (CompiledRouter): openapi-backend's router with the templates compiled once
 * into a tree, and its request parsing done once per request. About 400 lines in one module on purpose: one
 * class and the helpers only it uses, which are read together.
 */
import { createRequire } from 'node:module';
import { OpenAPIRouter, type Operation, type ParsedRequest, type Request } from 'openapi-backend';

/** The parts of a request that validation reads, typed (openapi-backend declares them `any`). */
export type RequestParts = Pick<
  ParsedRequest<unknown, Record<string, string>, Record<string, unknown>, Record<string, string | string[]>, Record<string, string | undefined>>,
  'path' | 'method' | 'params' | 'headers' | 'query' | 'cookies' | 'requestBody'
>;
import type { OpenAPIV3 } from 'openapi-types';

/*
 * openapi-backend's own helpers, resolved from openapi-backend's location so that they are exactly the
 * versions its stock router calls (they are its dependencies, not ours).
 */
const backendRequire = createRequire(createRequire(import.meta.url).resolve('openapi-backend'));
const cookie = backendRequire('cookie') as { parse: (header: string) => Record<string, string | undefined> };
const { cloneDeep } = backendRequire('lodash') as { cloneDeep: <T>(value: T) => T };

/**
 * A path parameter whose percent-encoding is malformed (openapi-backend's parser throws a bare URIError),
 * or whose decoded value cannot be stored (NUL).
 */
export class PathParameterEncodingError extends Error {
  constructor(
    readonly parameter: string,
    readonly problem = 'bad percent-encoding',
  ) {
    super(`path parameter '${parameter}': ${problem}`);
    this.name = 'PathParameterEncodingError';
  }
}

interface PathPattern {
  regex: RegExp;
  /** Length of the literal part: the more literal, the more specific (openapi-backend's ordering). */
  specificity: number;
  byMethod: Map<string, Operation>;
  /** Its number of '/': a path its RegExp matches has as many (a `{param}` matches `[^/]+`). */
  slashes: number;
  /** Its leading all-literal segments, which a path its RegExp matches begins with. */
  leading: string[];
}

/**
 * The templates by '/' count, then by leading literal segments: `/bench/r1/items/{id}` sits at
 * 4 > bench > r1 > items. A path walks down its own segments as far as the tree goes; the node it reaches
 * lists every template that can match it (those of that node and of its ancestors), in the global order.
 */
interface RouteNode {
  own: PathPattern[];
  candidates: PathPattern[];
  children: Map<string, RouteNode>;
}

function routeNode(): RouteNode {
  return { own: [], candidates: [], children: new Map() };
}

function countSlashes(path: string): number {
  let count = 0;
  for (let i = path.indexOf('/'); i !== -1; i = path.indexOf('/', i + 1)) count += 1;
  return count;
}

/** openapi-backend's normalizeRequest path, without building the copy of the request. */
function normalizedPath(req: Request): string {
  let path = req.path?.trim() || '';
  if (!path.startsWith('/')) path = `/${path}`;
  // path.split('?')[0], without the array
  const query = path.indexOf('?');
  return query === -1 ? path : path.slice(0, query);
}

/** The usual method names, lowercased once. */
const LOWERCASE_METHODS = new Map(['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS', 'TRACE'].map((method) => [method, method.toLowerCase()]));

/** openapi-backend's normalizeRequest method (a new lowercase string per call for any other spelling). */
function normalizedMethod(req: Request): string {
  return LOWERCASE_METHODS.get(req.method) ?? req.method.trim().toLowerCase();
}

interface PathParser {
  regex: RegExp;
  names: string[];
  /** For each parameter, the index of the first one with its name. */
  firstOfName: number[];
}

type QueryParameter = OpenAPIV3.ParameterObject;

function isPrimitive(value: unknown): boolean {
  return value === null || (typeof value !== 'object' && typeof value !== 'function');
}

/**
 * lodash `cloneDeep` for what a query object holds (strings, numbers, booleans, arrays of them), without
 * its generic machinery; anything else still goes through `cloneDeep`. Same result: a plain object (lodash
 * also turns Koa's null-prototype query into a plain object), `__proto__` kept as an own property.
 */
function cloneQuery(query: object): Record<string, unknown> {
  if (Object.getOwnPropertySymbols(query).length > 0) return cloneDeep(query) as Record<string, unknown>;
  const source = query as Record<string, unknown>;
  const copy: Record<string, unknown> = {};
  for (const key of Object.keys(source)) {
    let value = source[key];
    if (Array.isArray(value)) {
      if (Object.getPrototypeOf(value) !== Array.prototype || !value.every(isPrimitive) || Object.keys(value).length !== value.length) {
        return cloneDeep(query) as Record<string, unknown>;
      }
      value = value.slice();
    } else if (!isPrimitive(value)) {
      return cloneDeep(query) as Record<string, unknown>;
    }
    if (key === '__proto__') Object.defineProperty(copy, key, { configurable: true, enumerable: true, writable: true, value });
    else copy[key] = value;
  }
  return copy;
}

/** No operation: openapi-backend's error when strict, else undefined (not a closure: tsx names each one it creates). */
function noMatch(strict: boolean | undefined, reason: string): undefined {
  if (strict) throw Error(reason);
  return undefined;
}

/**
 * openapi-backend's router with its per-request costs compiled once. Routing, parsing and their results
 * are openapi-backend 5.21's (src/http/router.test.ts compares both routers); only the work moves:
 *
 * - `matchOperation`: the stock one rebuilds the operation list (lodash chain over the whole document) and
 *   compiles a RegExp per path template on every call, then sorts the matches. Here the operation list,
 *   an exact-path table and the template RegExps (sorted once by specificity) are built on first use.
 *   Same semantics: an exact path match wins; otherwise the matching templates are tried from the most
 *   literal to the least (a stable sort: ties keep document order, as lodash's orderBy does) and the first
 *   one that has the method is taken; a path that matches with no such method is "405", no match "404".
 *   So `/events/keyset` beats `/events/{id}`. Only the templates with the path's '/' count and leading
 *   literal segments are tested (see RouteNode): the others' RegExps cannot match.
 * - `parseRequest` (once per request, inside validation: the dispatcher in api.ts drives the steps
 *   itself instead of openapi-backend's handleRequest, which parses four times). The stock one compiles
 *   the operation's path template with bath-es5 each time, scans the operation's parameters for each
 *   query value, lodash-maps the headers, deep-clones the query and builds its result by adding
 *   properties after an object spread (slow in V8). Here bath-es5's path parsing is compiled per template
 *   and the query-parameter lookup cached per operation, headers and query are copied with plain loops
 *   and the result is built with Object.assign (same results).
 * - `normalizeRequest` builds its copy with Object.assign, and matching/parsing skip the copy altogether.
 * - `parseRequestQuery` no longer serialises an object query with URLSearchParams only to discard it.
 * - A malformed percent-escape in a path parameter throws PathParameterEncodingError (the dispatcher
 *   answers 400) instead of bath-es5's bare URIError (a 500).
 *
 * Why, measured with bench/dispatch.ts (150+ operations, 32 connections, a 2-vCPU VM): with the stock router
 * openapi-backend answered 2.2k / 1.0k requests/s on a literal / templated path against 40k for plain Koa;
 * the service's whole stack around this router answers about three quarters / two thirds of plain Koa's
 * (docs/architecture.md, "The HTTP stack").
 */
export class CompiledRouter extends OpenAPIRouter {
  private operations: Operation[] | undefined;
  private byId: Map<string, Operation> | undefined;
  private exact: Map<string, Map<string, Operation>> | undefined;
  /** The sorted patterns that can match a path, by '/' count (see RouteNode). */
  private routes: Map<number, RouteNode> | undefined;
  private readonly pathParsers = new Map<string, PathParser>();
  private readonly queryParameters = new WeakMap<Operation, Map<string, QueryParameter>>();

  override getOperations(): Operation[] {
    this.operations ??= super.getOperations();
    return this.operations;
  }

  override getOperation(operationId: string): Operation | undefined {
    if (!this.byId) {
      // `find` returns the first operation with the id: keep the first one here too.
      this.byId = new Map();
      for (const op of this.getOperations()) if (!this.byId.has(op.operationId as string)) this.byId.set(op.operationId as string, op);
    }
    return this.byId.get(operationId);
  }

  override matchOperation(req: Request): Operation | undefined;
  override matchOperation(req: Request, strict: true): Operation;
  override matchOperation(req: Request, strict?: boolean): Operation | undefined {
    this.compile();
    const requestPath = normalizedPath(req);
    if (!(this as unknown as { isUnderApiRoot(path: string): boolean }).isUnderApiRoot(requestPath)) {
      return noMatch(strict, '404-notFound: no route matches request');
    }
    const method = normalizedMethod(req);
    const path = this.normalizePath(requestPath);

    const exactMatch = this.exact!.get(path)?.get(method);
    if (exactMatch) return exactMatch;

    // Only the templates that can match the path (same '/' count, same leading literal segments) are
    // tested, in the global order; the others' RegExps would all fail.
    let node = this.routes!.get(countSlashes(path));
    let candidates = node?.candidates ?? [];
    for (let start = 1; node && node.children.size > 0; ) {
      const end = path.indexOf('/', start);
      node = node.children.get(path.slice(start, end === -1 ? undefined : end));
      if (!node) break;
      candidates = node.candidates;
      if (end === -1) break;
      start = end + 1;
    }
    let pathMatched = false;
    for (const pattern of candidates) {
      if (!pattern.regex.test(path)) continue;
      pathMatched = true;
      const operation = pattern.byMethod.get(method);
      if (operation) return operation;
    }
    return pathMatched
      ? noMatch(strict, '405-methodNotAllowed: this method is not registered for the route')
      : noMatch(strict, '404-notFound: no route matches request');
  }

  /** The stock result (`{ ...req, path, method }`), built with Object.assign (see parseRequest). */
  override normalizeRequest(req: Request): Request {
    const path = normalizedPath(req);
    const method = normalizedMethod(req);
    if (Object.hasOwn(req, '__proto__')) return { ...req, path, method };
    return Object.assign({}, req, { path, method });
  }

  override parseRequestQuery(req: Request): { [key: string]: unknown } {
    if (typeof req.query === 'object') return req.query === null ? req.query : cloneQuery(req.query);
    return super.parseRequestQuery(req);
  }

  override parseRequest(req: Request, operation?: Operation): ParsedRequest {
    // `{ ...normalizeRequest(req), params, headers, query, cookies, requestBody }`, the stock result, with
    // the same keys in the same order. V8 adds properties after an object spread slowly (about 0.7 µs each,
    // 3 µs here, and worse on the validator's copies of the request); Object.assign onto a fresh object
    // does not. (Unlike a spread it would run the `__proto__` setter: such a request takes the spread.)
    const parsed = this.parseParts(req, operation);
    if (Object.hasOwn(req, '__proto__')) return { ...req, ...parsed } as ParsedRequest;
    return Object.assign({}, req, parsed) as ParsedRequest;
  }

  /**
   * What parseRequest adds to the request, without the copy of the request (all the validator reads).
   * `withHeaders` false leaves headers and cookies empty, for a validator that reads neither; `ownQuery`
   * true parses (and lets validation coerce) the request's query object itself instead of a copy.
   */
  parseParts(
    req: Request,
    operation?: Operation,
    withHeaders = true,
    ownQuery = false,
  ): RequestParts {
    let requestBody: unknown = req.body;
    if (req.body && typeof req.body !== 'object') {
      try {
        requestBody = JSON.parse(String(req.body));
      } catch {
        // as openapi-backend: left as is, validation reports it
      }
    }
    // header names lowercased (lodash mapKeys: own enumerable keys, a later duplicate wins)
    const headers: Record<string, string | string[]> = {};
    if (withHeaders && req.headers) for (const name of Object.keys(req.headers)) headers[name.toLowerCase()] = req.headers[name] as string | string[];
    const cookieHeader = headers['cookie'];
    // `_.flatten([cookieHeader]).join('; ')`: no header parses ''.
    const cookies = withHeaders
      ? cookie.parse(Array.isArray(cookieHeader) ? cookieHeader.join('; ') : cookieHeader === undefined || cookieHeader === null ? '' : String(cookieHeader))
      : {};
    const query = ownQuery && typeof req.query === 'object' && req.query !== null ? (req.query as Record<string, unknown>) : this.parseRequestQuery(req);
    const path = normalizedPath(req);
    const method = normalizedMethod(req);
    let params: Record<string, string> = {};
    if (operation) {
      params = this.parsePathParams(operation.path, this.normalizePath(path));
      const declared = this.queryParametersOf(operation);
      if (declared.size > 0) for (const queryParam in query) {
        if (!query[queryParam]) continue;
        const parameter = declared.get(queryParam);
        if (!parameter) continue;
        // the rest of this loop body is openapi-backend's, unchanged
        if (parameter.content && parameter.content['application/json']) {
          const rawValue = query[queryParam];
          if (typeof rawValue === 'string') {
            try {
              query[queryParam] = JSON.parse(rawValue);
            } catch {
              // left as is: validation reports malformed JSON
            }
          }
        } else if (parameter.explode === false) {
          const rawValue = query[queryParam];
          if (Array.isArray(rawValue) && rawValue.length > 1) continue;
          const value: unknown = Array.isArray(rawValue) ? rawValue[0] : rawValue;
          if (typeof value !== 'string') continue;
          let decoded = value.replace(/%2C/g, ',');
          if (parameter.style === 'spaceDelimited') decoded = decoded.replace(/ /g, ',').replace(/%20/g, ',');
          if (parameter.style === 'pipeDelimited') decoded = decoded.replace(/\|/g, ',').replace(/%7C/g, ',');
          query[queryParam] = decoded.split(',');
        }
      }
    }
    return { path, method, params, headers, query, cookies, requestBody };
  }

  /**
   * bath-es5's `params(template)(path)` (what openapi-backend calls), compiled once per template: its RegExp
   * (literal parts unescaped, as bath-es5 builds it), every value percent-decoded before anything else,
   * `{}` when the path does not match or a repeated name has two values, else the object built by
   * assignment (bath-es5's Object.assign). Its closures per call cost more than the parsing itself.
   */
  private parsePathParams(template: string, path: string): Record<string, string> {
    let parser = this.pathParsers.get(template);
    if (!parser) {
      const names = (template.match(/\{[A-Za-z0-9_-]+\}/g) ?? []).map((name) => name.slice(1, -1));
      const regex = new RegExp(`^${template.replace(/\{[A-Za-z0-9_-]+\}/g, '([^\\/]*)')}$`);
      parser = { regex, names, firstOfName: names.map((name) => names.indexOf(name)) };
      this.pathParsers.set(template, parser);
    }
    // no parameter: `{}` whether the path matches or not
    if (parser.names.length === 0) return {};
    const match = parser.regex.exec(path);
    if (match === null) return {};
    // every value decoded (a malformed one throws) before any is compared; in place in the match
    for (let i = 1; i <= parser.names.length; i++) {
      const raw = match[i]!;
      try {
        if (raw.includes('%')) {
          match[i] = decodeURIComponent(raw);
          // (decoding never yields a lone surrogate: malformed UTF-8 throws)
          if (match[i]!.includes('\u0000')) throw new PathParameterEncodingError(parser.names[i - 1]!, 'contains a NUL character');
        }
      } catch (error) {
        if (error instanceof URIError) throw new PathParameterEncodingError(parser.names[i - 1]!);
        throw error;
      }
    }
    const params: Record<string, string> = {};
    for (let i = 0; i < parser.names.length; i++) {
      if (match[parser.firstOfName[i]! + 1] !== match[i + 1]) return {};
      params[parser.names[i]!] = match[i + 1]!;
    }
    return params;
  }

  /**
   * The first query parameter of each name, as the stock parser's `parameters.find(...)` picks it, if the
   * parser rewrites its value (JSON content, or not exploded); it leaves the others' values as they are.
   */
  private queryParametersOf(operation: Operation): Map<string, QueryParameter> {
    let byName = this.queryParameters.get(operation);
    if (!byName) {
      byName = new Map();
      for (const param of operation.parameters ?? []) {
        if (!param || '$ref' in param || param.in !== 'query' || byName.has(param.name)) continue;
        byName.set(param.name, param);
      }
      for (const [name, param] of byName) if (!param.content?.['application/json'] && param.explode !== false) byName.delete(name);
      this.queryParameters.set(operation, byName);
    }
    return byName;
  }

  private compile(): void {
    if (this.exact && this.routes) return;
    const exact = new Map<string, Map<string, Operation>>();
    const patterns = new Map<string, PathPattern>();
    for (const operation of this.getOperations()) {
      const { path, method } = operation;
      if (!exact.has(path)) exact.set(path, new Map());
      // `find` takes the first operation with the method: keep the first one.
      if (!exact.get(path)!.has(method)) exact.get(path)!.set(method, operation);
      if (!patterns.has(path)) {
        // openapi-backend's pathTemplateToPattern, and its specificity (literal length)
        const literals = path.replace(/\{[^}]+\}/g, '\0').split('\0');
        const source = literals.map((literal) => literal.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')).join('[^/]+');
        // the template with its parameters as NUL: its '/' are the ones a matching path has
        const skeleton = literals.join('\0');
        const segments = skeleton.startsWith('/') ? skeleton.slice(1).split('/') : [];
        const templated = segments.findIndex((segment) => segment.includes('\0'));
        patterns.set(path, {
          regex: new RegExp(`^${source}$`),
          specificity: path.replace(/\{.*?\}/g, '').length,
          byMethod: new Map(),
          slashes: countSlashes(skeleton),
          leading: templated === -1 ? segments : segments.slice(0, templated),
        });
      }
      const pattern = patterns.get(path)!;
      if (!pattern.byMethod.has(method)) pattern.byMethod.set(method, operation);
    }
    // Array.prototype.sort is stable: ties keep document order, as lodash's orderBy does.
    const sorted = [...patterns.values()].sort((a, b) => b.specificity - a.specificity);
    const routes = new Map<number, RouteNode>();
    for (const pattern of sorted) {
      if (!routes.has(pattern.slashes)) routes.set(pattern.slashes, routeNode());
      let node = routes.get(pattern.slashes)!;
      for (const segment of pattern.leading) {
        if (!node.children.has(segment)) node.children.set(segment, routeNode());
        node = node.children.get(segment)!;
      }
      node.own.push(pattern);
    }
    const fill = (node: RouteNode, inherited: PathPattern[]): void => {
      const reachable = new Set([...inherited, ...node.own]);
      node.candidates = sorted.filter((pattern) => reachable.has(pattern));
      for (const child of node.children.values()) fill(child, node.candidates);
    };
    for (const root of routes.values()) fill(root, []);
    this.exact = exact;
    this.routes = routes;
  }
}

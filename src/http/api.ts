import { createRequire } from 'node:module';
import type { Middleware } from 'koa';
import { OpenAPIBackend, type Document, type Operation, type Request } from 'openapi-backend';
import type { ErrorObject } from 'ajv';
import type { OpenAPIV3 } from 'openapi-types';
import { operationTable } from '../generated/operations.js';
import type { Account } from '../domain/accounts/service.js';
import { forbidden, invalid } from '../domain/errors.js';
import { findUnstorable, unstorable } from '../domain/storable-text.js';
import type { RateLimitClass } from '../config.js';
import { readJsonBodyAndText } from './body.js';
import type { KeyPrincipal, PendingHmacCheck, SignatureCheck } from '../domain/api-keys/service.js';
import { clientAddress, limitHeaders, type RequestLimiter } from './rate-limit.js';
import type { Services } from '../services.js';
import { sendError, sendJson } from './errors.js';
import { describeValidationErrors } from './validation-errors.js';
import { clampQuery, malformedNumerals, numericQueryParametersOf, parseQuery, type NumericType } from './query.js';
import { CompiledRouter, PathParameterEncodingError } from './router.js';
import { CompiledValidator } from './validator.js';
import type { ApiRequest, HandlerDeps } from './types.js';

const require = createRequire(import.meta.url);

/** Compiled by codegen from the same document (see codegen/validators.ts). */
const precompiledValidators = require('../generated/request-validators.cjs') as Readonly<Record<string, readonly unknown[]>>;

function bearerToken(header: unknown): string | undefined {
  if (typeof header !== 'string') return undefined;
  const match = /^Bearer\s+([A-Za-z0-9._~+/=-]{1,512})\s*$/i.exec(header);
  return match?.[1];
}

/** One row of the operation table codegen emits (src/generated/operations.ts), by operationId. */
export interface DispatchEntry {
  readonly handler: string;
  readonly requiredRole?: string;
  readonly clampMaxima: Readonly<Record<string, number>>;
  /** `x-rate-limit`: the budget the operation draws on (by default public-reads, private-reads with a token). */
  readonly rateLimit?: RateLimitClass;
  /** `x-rate-limit-count`: the body array whose items the request draws from its budget, one each. */
  readonly rateLimitCount?: string;
  /** `x-api-key-scope`: the scope an API key needs (the operation accepts signed requests). */
  readonly apiKeyScope?: 'read' | 'trade';
}

/** What the dispatcher resolves once per operation. */
interface Route {
  operationId: string;
  entry: DispatchEntry;
  implementation: OperationImplementation;
  access: Access;
  numeric: ReadonlyArray<readonly [string, NumericType]>;
  clampMaxima: ReadonlyArray<readonly [string, number]>;
  limitClass: RateLimitClass;
  /** Whether the operation takes a request body (read, as JSON, only once its checks have passed). */
  readsBody: boolean;
  /** The declared query parameters, whose values are checked for text that cannot be stored. */
  queryNames: readonly string[];
}

/**
 * The operation's security requirements (the router has merged in the document's), any one of which
 * suffices: none or an empty one, 'open'; bearerAuth alone, 'bearer'; bearerAuth, and also the headers of
 * both signature schemes (API keys), 'signed'; else 'closed' (a requirement that cannot be met).
 */
type Access = 'open' | 'bearer' | 'signed' | 'closed';

const KALSHI_SCHEMES = ['kalshiAccessKey', 'kalshiAccessSignature', 'kalshiAccessTimestamp'].join();
const POLY_SCHEMES = ['polyAddress', 'polyApiKey', 'polyPassphrase', 'polySignature', 'polyTimestamp'].join();

function accessOf(operation: Operation): Access {
  const requirements = (operation.security ?? []).map((requirement) => Object.keys(requirement).sort().join());
  if (requirements.length === 0 || requirements.includes('')) return 'open';
  if (!requirements.includes('bearerAuth')) return 'closed';
  return requirements.includes(KALSHI_SCHEMES) && requirements.includes(POLY_SCHEMES) ? 'signed' : 'bearer';
}

/** A header sent once, as a string of at most 2 KiB; undefined otherwise. */
function headerOf(headers: Record<string, unknown>, name: string): string | undefined {
  const value = headers[name];
  return typeof value === 'string' && value.length <= 2048 ? value : undefined;
}

/** Who makes a request: a session's account, or an API key's (verified, or awaiting its body for an order-book signature). */
interface Caller {
  account?: Account;
  key?: KeyPrincipal;
  /** An accepted signature, to be checked against replays. */
  signature?: Extract<SignatureCheck, { principal: KeyPrincipal }>;
  pending?: PendingHmacCheck;
  /** Why the credentials sent are refused (401). */
  refused?: string;
}

const SESSION_ONLY = 'this operation takes a session token (Authorization: Bearer) only: API keys do not reach account or admin operations';

/** An object or array Koa would send as JSON (not a Buffer, stream, Blob or Response). */
function isJsonValue(body: unknown): boolean {
  return typeof body === 'object' && body !== null && (Array.isArray(body) || Object.getPrototypeOf(body) === Object.prototype);
}

/** What an operation implementation looks like to the dispatcher (HandlerRegistry's entries, untyped). */
export type OperationImplementation = (
  request: ApiRequest<never>,
  deps: HandlerDeps,
) => Promise<{ status: number | string; body: unknown; headers?: Record<string, string> }>;

export interface ApiMiddlewareOptions {
  services: Services;
  /** The bundled OpenAPI document; by default the one the service serves (`services.document`). */
  document?: object;
  /** operationId -> handler name, role, clamps; by default the generated table. */
  operations?: Readonly<Record<string, DispatchEntry>>;
  /** operationId -> openapi-backend's request validators as compiled ahead of time; by default the generated ones. */
  validators?: Readonly<Record<string, readonly unknown[]>>;
  /** handler name -> implementation (the service passes src/handlers). */
  handlers: Readonly<Record<string, OperationImplementation>>;
  /** The request budgets; none: no rate limiting. */
  limiter?: RequestLimiter;
  /** How long a request body may take to arrive (default 30 s). */
  bodyTimeoutMs?: number;
  /** Take the client address from X-Forwarded-For (see clientAddress). */
  trustProxy?: boolean;
}

/**
 * The OpenAPI dispatcher: openapi-backend matches the route (through the compiled router), authenticates,
 * validates and coerces the request with the precompiled validators, then calls the operation's handler.
 *
 * The service (src/app.ts) and the dispatch benchmark (bench/dispatch.ts) both build it here; the benchmark
 * passes a padded document with its own operation table, validators (emitted by codegen/validators.ts) and
 * handlers. Nothing is compiled at start or on a first request: routing is compiled once by CompiledRouter
 * and every operation must come with its precompiled validators, or creation fails (run `npm run codegen`).
 */
export async function createApiMiddleware(options: ApiMiddlewareOptions): Promise<Middleware> {
  const { services } = options;
  const document = options.document ?? services.document;
  const operations = options.operations ?? (operationTable as Readonly<Record<string, DispatchEntry>>);
  const validators = options.validators ?? precompiledValidators;
  const implementations = options.handlers;
  const { limiter } = options;
  const trustProxy = options.trustProxy ?? false;
  const bodyOptions = { timeoutMs: options.bodyTimeoutMs ?? 30_000 };

  const api = new OpenAPIBackend({
    definition: structuredClone(document) as Document,
    // quick: no document validation at start (codegen validated it) and lazy validator compilation, which
    // never happens because every operation's validators are installed below.
    quick: true,
    strict: true,
    coerceTypes: true,
    apiRoot: '/',
  });
  await api.init();
  // openapi-backend's router and validator, with their per-request work compiled once (see router.ts).
  const router = new CompiledRouter({ definition: api.definition, apiRoot: api.apiRoot, ignoreTrailingSlashes: api.ignoreTrailingSlashes });
  const validator = new CompiledValidator({ definition: api.definition, router, lazyCompileValidators: true, coerceTypes: api.coerceTypes });

  // Every operation of the document needs a table row, an implementation and its precompiled validators:
  // a missing validator would be compiled lazily by openapi-backend with other Ajv options (and 90 ms).
  const problems: string[] = [];
  const routes: Route[] = [];
  const requestValidators: Record<string, unknown> = {};
  for (const operation of router.getOperations()) {
    const operationId = operation.operationId;
    const where = `${operation.method.toUpperCase()} ${operation.path}`;
    if (!operationId) {
      problems.push(`${where} has no operationId`);
      continue;
    }
    const entry = Object.hasOwn(operations, operationId) ? operations[operationId] : undefined;
    const implementation = entry && Object.hasOwn(implementations, entry.handler) ? implementations[entry.handler] : undefined;
    const compiled = Object.hasOwn(validators, operationId) ? validators[operationId] : undefined;
    if (!entry) problems.push(`${operationId} (${where}) is not in the operation table`);
    else if (typeof implementation !== 'function') problems.push(`${operationId} (${where}): no handler '${entry.handler}'`);
    if (!Array.isArray(compiled)) problems.push(`${operationId} (${where}) has no precompiled request validators`);
    else requestValidators[operationId] = compiled;
    if (entry && typeof implementation === 'function') {
      const access = accessOf(operation);
      if (access === 'signed' && !entry.apiKeyScope) problems.push(`${operationId} (${where}) accepts signed requests but names no x-api-key-scope`);
      const queryNames = ((operation.parameters ?? []) as OpenAPIV3.ParameterObject[]).filter((p) => p.in === 'query').map((p) => p.name);
      routes.push({
        operationId,
        entry,
        implementation,
        access,
        numeric: numericQueryParametersOf(operation),
        clampMaxima: Object.entries(entry.clampMaxima),
        limitClass: entry.rateLimit ?? (access === 'bearer' ? 'private-reads' : 'public-reads'),
        readsBody: Boolean(operation.requestBody),
        queryNames: [...new Set(queryNames)],
      });
    }
  }
  if (problems.length > 0) {
    throw new Error(`the dispatcher does not match the document (run npm run codegen):\n  - ${problems.join('\n  - ')}`);
  }
  (validator as unknown as { requestValidators: Record<string, unknown> }).requestValidators = requestValidators;

  const routeById = new Map(routes.map((route) => [route.operationId, route]));

  /** The account of a 'bearer' operation's token, or undefined if it has none or an unknown one. */
  async function bearerAccount(headers: Record<string, unknown>): Promise<Account | undefined> {
    const token = bearerToken(headers.authorization);
    return token ? await services.accounts.authenticate(token) : undefined;
  }

  /**
   * The caller of a 'bearer' or 'signed' operation: `Authorization: Bearer` when sent (or required), else
   * the KALSHI-ACCESS-* or POLY_* headers of an API key (README, "API keys for bots").
   */
  async function callerOf(route: Route, method: string, path: string, query: string, headers: Record<string, unknown>): Promise<Caller> {
    const rsaKey = headerOf(headers, 'kalshi-access-key');
    const hmacKey = headerOf(headers, 'poly_api_key');
    if (route.access === 'bearer' || headers.authorization !== undefined || (rsaKey === undefined && hmacKey === undefined)) {
      const account = await bearerAccount(headers);
      return account ? { account } : { refused: route.access === 'bearer' && (rsaKey ?? hmacKey) !== undefined ? SESSION_ONLY : undefined };
    }
    if (rsaKey !== undefined) {
      const check = await services.apiKeys.checkRsa(
        { key: rsaKey, timestamp: headerOf(headers, 'kalshi-access-timestamp') ?? '', signature: headerOf(headers, 'kalshi-access-signature') ?? '' },
        method,
        path,
      );
      return 'refused' in check ? { refused: check.refused } : { account: check.principal.account, key: check.principal, signature: check };
    }
    const pending = await services.apiKeys.checkHmac(
      {
        key: hmacKey!,
        passphrase: headerOf(headers, 'poly_passphrase') ?? '',
        address: headerOf(headers, 'poly_address') ?? '',
        timestamp: headerOf(headers, 'poly_timestamp') ?? '',
        signature: headerOf(headers, 'poly_signature') ?? '',
      },
      method,
      path,
      query,
    );
    return 'refused' in pending ? { refused: pending.refused } : { account: pending.principal.account, key: pending.principal, pending };
  }

  /**
   * Takes the request from its budget (the account's with a valid token or key, else the client address's;
   * a key's request from the key's own budget too): the RateLimit-* headers (of the budget with the fewest
   * requests left) go on the answer, whatever it is; over budget, 429 before anything else is done.
   * `points`: what is taken now; `counted`: what the request counts in all (x-rate-limit-count), for the refusal.
   */
  function withinBudget(
    koa: Parameters<Middleware>[0],
    limitClass: RateLimitClass,
    account: Account | undefined,
    key?: KeyPrincipal,
    points = 1,
    counted = 1,
  ): boolean {
    if (!limiter) return true;
    let decision = account ? limiter.take(limitClass, 'account', account.id, points) : limiter.take(limitClass, 'address', clientAddress(koa.req, trustProxy), points);
    const ofKey = key && limiter.takeKey(limitClass, key.keyId, points);
    if (ofKey && (!ofKey.allowed || (decision.allowed && ofKey.remaining < decision.remaining))) decision = ofKey;
    const headers = limitHeaders(decision);
    for (const name in headers) koa.res.setHeader(name, headers[name]!);
    if (decision.allowed) return true;
    const asked = counted > 1 ? ` (this request counts ${counted})` : '';
    sendError(koa, 'rate_limited', `too many requests: the ${limitClass} budget of ${decision.limit} requests is spent${asked}; retry in ${decision.resetSecs} s`);
    return false;
  }

  // openapi-backend's request pipeline (route, security, validation with coercion, handler) driven here
  // step by step: its handleRequest parses the request four times and matches it twice; this matches once
  // and parses once, inside the validator. Order of checks: 404/405, the budget (429), 401, 403, then the
  // body (415, 408, 413, 400) and validation (400): a caller lacking the role never learns the schema. An
  // order-book signature (over the body) and any signature's replay are checked after the body (401).
  return async (koa) => {
    // ctx.request and ctx.response, not Koa's ctx.* shortcuts (see requestLifecycle)
    const { request: incoming, response } = koa;
    const query = parseQuery(incoming.querystring);
    const req: Request = {
      // HEAD is answered as the GET of the same path (Koa sends its headers without the body).
      method: incoming.method === 'HEAD' ? 'GET' : incoming.method,
      path: incoming.path,
      query,
      headers: incoming.headers as Record<string, string | string[]>,
      body: undefined,
    };
    let operation: Operation;
    try {
      operation = router.matchOperation(req, true);
    } catch (error) {
      if (!withinBudget(koa, 'public-reads', undefined)) return;
      if (error instanceof Error && error.message.startsWith('405')) return sendError(koa, 'method_not_allowed', `${incoming.method} is not allowed on ${incoming.path}`);
      return sendError(koa, 'not_found', `no route ${incoming.method} ${incoming.path}`);
    }
    const route = routeById.get(operation.operationId as string)!;
    // for the layers around the dispatcher (caching, metrics, the access log)
    koa.state.operationId = route.operationId;
    // Only operations that take a token or a key wait for the account lookup.
    const caller: Caller = route.access === 'bearer' || route.access === 'signed' ? await callerOf(route, incoming.method, incoming.path, incoming.querystring, req.headers) : {};
    const { account, key } = caller;
    if (account) koa.state.accountId = account.id;
    if (!withinBudget(koa, route.limitClass, account, key)) return;
    if (route.access === 'closed' || (route.access !== 'open' && !account)) return sendError(koa, 'unauthorized', caller.refused ?? 'missing or invalid bearer token');
    if (key && !key.scopes.includes(route.entry.apiKeyScope!)) throw forbidden(`this API key lacks the '${route.entry.apiKeyScope}' scope`);
    if (route.entry.requiredRole && account?.role !== route.entry.requiredRole) throw forbidden(`requires role ${route.entry.requiredRole}`);
    let bodyText = '';
    if (route.readsBody) ({ value: req.body, text: bodyText } = await readJsonBodyAndText(koa, bodyOptions));
    // An order-book signature covers the body, so it is checked once the body has arrived.
    const signature = caller.pending ? caller.pending.verify(bodyText) : caller.signature;
    if (signature && 'refused' in signature) return sendError(koa, 'unauthorized', signature.refused);
    if (signature && !(await services.apiKeys.firstUse(signature))) return sendError(koa, 'unauthorized', 'this signature was used before: sign every request afresh (replays are refused)');
    if (key) koa.state.apiKeyId = key.keyId;

    // Text PostgreSQL cannot store (NUL, lone surrogates) in the body or a declared query parameter.
    const bad = textProblem(route, query, req.body);
    if (bad) throw invalid(`${bad.where} ${bad.problem}`, [{ location: bad.location, path: bad.path, message: bad.problem }]);

    // On the values as sent: validation coerces the query in place (it is this request's own object).
    const numerals = malformedNumerals(route.numeric, query);
    let validation: ReturnType<CompiledValidator['validateOperation']>;
    try {
      validation = validator.validateOperation(req, operation, true);
    } catch (error) {
      // openapi-backend's path parser percent-decodes path parameters and throws on a malformed escape.
      if (error instanceof PathParameterEncodingError) {
        throw invalid(`path parameter '${error.parameter}' ${error.problem === 'bad percent-encoding' ? 'is not validly percent-encoded' : error.problem}`, [
          { location: 'path', path: error.parameter, message: error.problem },
        ]);
      }
      throw error;
    }
    if (numerals || validation.errors) {
      const reported = new Set(numerals?.map((error) => error.instancePath));
      const errors = [...(numerals ?? []), ...((validation.errors ?? []) as ErrorObject[]).filter((error) => !reported.has(error.instancePath))];
      const { message, details } = describeValidationErrors(errors);
      return sendError(koa, 'invalid_request', message, details);
    }

    // A request that counts the items of a body array (x-rate-limit-count) draws the rest of them now that
    // the body is known to be valid: one was taken with the request.
    const countedItems = route.entry.rateLimitCount === '/' ? req.body : (req.body as Record<string, unknown> | undefined)?.[route.entry.rateLimitCount ?? ''];
    const counted = route.entry.rateLimitCount ? (countedItems as unknown[]).length : 1;
    if (counted > 1 && !withinBudget(koa, route.limitClass, account, key, counted - 1, counted)) return;

    // openapi-backend's coerced request (its query coerced in place): no path parameters if no validator passed.
    const request = {
      operationId: route.operationId,
      // Already percent-decoded once by the path parser (as openapi-backend's bath-es5); not decoded again.
      params: validation.coerced ? validation.params : undefined,
      query: clampQuery(query, route.clampMaxima),
      body: req.body,
      account,
      apiKey: key,
      token: account && !key ? bearerToken(req.headers.authorization) : undefined,
      requestId: String(koa.state.requestId ?? ''),
      clientAddress: route.limitClass === 'login' || route.limitClass === 'registration' ? clientAddress(koa.req, trustProxy) : undefined,
    } as unknown as ApiRequest<never>;
    const reply = await route.implementation(request, { services, koa });
    response.status = Number(reply.status);
    if (reply.headers) response.set(reply.headers);
    if (isJsonValue(reply.body)) sendJson(koa, reply.body as object);
    else response.body = reply.body;
  };
}

/** The first declared query value or body field holding text that cannot be stored. */
function textProblem(
  route: Route,
  query: Record<string, unknown>,
  body: unknown,
): { where: string; location: 'query' | 'body'; path: string; problem: string } | undefined {
  for (const name of route.queryNames) {
    const value = query[name];
    if (value === undefined) continue;
    for (const item of Array.isArray(value) ? value : [value]) {
      const problem = typeof item === 'string' ? unstorable(item) : undefined;
      if (problem) return { where: `query parameter '${name}'`, location: 'query', path: name, problem };
    }
  }
  if (body === undefined) return undefined;
  const found = findUnstorable(body);
  return found ? { where: `request body field '${found.path}'`, location: 'body', path: found.path, problem: found.problem } : undefined;
}

import type { Context } from 'koa';
import type { Operation, Request } from 'openapi-backend';
import type { OpenAPIV3 } from 'openapi-types';
import { sendError } from '../errors.js';
import { numericQueryParametersOf, parseQuery } from '../query.js';
import type { CompiledRouter } from '../router.js';
import type { Budget } from './budget.js';
import type { Access, Call, DispatchEntry, OperationImplementation, Route } from './call.js';

const KALSHI_SCHEMES = ['kalshiAccessKey', 'kalshiAccessSignature', 'kalshiAccessTimestamp'].join();
const POLY_SCHEMES = ['polyAddress', 'polyApiKey', 'polyPassphrase', 'polySignature', 'polyTimestamp'].join();

function accessOf(operation: Operation): Access {
  const requirements = (operation.security ?? []).map((requirement) => Object.keys(requirement).sort().join());
  if (requirements.length === 0 || requirements.includes('')) return 'open';
  if (!requirements.includes('bearerAuth')) return 'closed';
  return requirements.includes(KALSHI_SCHEMES) && requirements.includes(POLY_SCHEMES) ? 'signed' : 'bearer';
}

function routeOf(operation: Operation, operationId: string, entry: DispatchEntry, implementation: OperationImplementation): Route {
  const access = accessOf(operation);
  const queryNames = ((operation.parameters ?? []) as OpenAPIV3.ParameterObject[]).filter((p) => p.in === 'query').map((p) => p.name);
  return {
    operationId,
    entry,
    implementation,
    access,
    numeric: numericQueryParametersOf(operation),
    clampMaxima: Object.entries(entry.clampMaxima),
    limitClass: entry.rateLimit ?? (access === 'bearer' ? 'private-reads' : 'public-reads'),
    readsBody: Boolean(operation.requestBody),
    queryNames: [...new Set(queryNames)],
  };
}

/**
 * The route of every operation of the document, and its precompiled request validators. Each needs a table
 * row, an implementation and its validators, or this throws: a missing validator would be compiled lazily
 * by openapi-backend with other Ajv options (and 90 ms).
 */
export function routeTable(
  router: CompiledRouter,
  operations: Readonly<Record<string, DispatchEntry>>,
  implementations: Readonly<Record<string, OperationImplementation>>,
  validators: Readonly<Record<string, readonly unknown[]>>,
): { routes: Map<string, Route>; requestValidators: Record<string, unknown> } {
  const problems: string[] = [];
  const routes = new Map<string, Route>();
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
      const route = routeOf(operation, operationId, entry, implementation);
      if (route.access === 'signed' && !entry.apiKeyScope) problems.push(`${operationId} (${where}) accepts signed requests but names no x-api-key-scope`);
      routes.set(operationId, route);
    }
  }
  if (problems.length > 0) {
    throw new Error(`the dispatcher does not match the document (run npm run codegen):\n  - ${problems.join('\n  - ')}`);
  }
  return { routes, requestValidators };
}

/**
 * The first step: the request's operation, matched once by the compiled router, and the call the other
 * steps work on. No operation: 405 or 404, once the request is taken from the client address's
 * public-reads budget (429).
 */
export function route(router: CompiledRouter, routes: ReadonlyMap<string, Route>, budget: Budget): (koa: Context) => Call | undefined {
  return (koa) => {
    // ctx.request, not Koa's ctx.* shortcuts (see requestLifecycle)
    const { request: incoming } = koa;
    const query = parseQuery(incoming.querystring);
    const request: Request = {
      // HEAD is answered as the GET of the same path (Koa sends its headers without the body).
      method: incoming.method === 'HEAD' ? 'GET' : incoming.method,
      path: incoming.path,
      query,
      headers: incoming.headers as Record<string, string | string[]>,
      body: undefined,
    };
    let operation: Operation;
    try {
      operation = router.matchOperation(request, true);
    } catch (error) {
      if (!budget(koa, 'public-reads', {})) return undefined;
      if (error instanceof Error && error.message.startsWith('405')) sendError(koa, 'method_not_allowed', `${incoming.method} is not allowed on ${incoming.path}`);
      else sendError(koa, 'not_found', `no route ${incoming.method} ${incoming.path}`);
      return undefined;
    }
    const route = routes.get(operation.operationId as string)!;
    // for the layers around the dispatcher (caching, metrics, the access log)
    koa.state.operationId = route.operationId;
    return { koa, route, operation, request, query, caller: {}, bodyText: '' };
  };
}

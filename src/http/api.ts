import { createRequire } from 'node:module';
import type { Middleware } from 'koa';
import { OpenAPIBackend, type Document } from 'openapi-backend';
import { operationTable } from '../generated/operations.js';
import { DIRECT_CLIENTS, type ClientAddressing } from '../config.js';
import type { RequestLimiter } from '../admission/rate-limit.js';
import type { Services } from '../domain/services.js';
import { CompiledRouter } from './router.js';
import { CompiledValidator } from './validator.js';
import { admit, authenticate, verifySignature } from './steps/authenticate.js';
import { bearer } from './steps/bearer.js';
import { body } from './steps/body.js';
import { budget, budgetOf, countedBudget, signedBudget } from './steps/budget.js';
import type { DispatchEntry, OperationImplementation, Step } from './steps/call.js';
import { dispatch } from './steps/dispatch.js';
import { hmac } from './steps/hmac.js';
import { role } from './steps/role.js';
import { route, routeTable } from './steps/route.js';
import { rsaPss } from './steps/rsa-pss.js';
import { validate } from './steps/validate.js';

export type { DispatchEntry, OperationImplementation } from './steps/call.js';

const require = createRequire(import.meta.url);

/** Compiled by codegen from the same document (see codegen/validators.ts). */
const precompiledValidators = require('../generated/request-validators.cjs') as Readonly<Record<string, readonly unknown[]>>;

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
  /** How client addresses are told (see clientAddress); by default the socket's peer, IPv6 per /64. */
  clients?: ClientAddressing;
}

/** openapi-backend's router and validator for the document, with their per-request work compiled once (see router.ts). */
async function compiledBackend(document: object): Promise<{ router: CompiledRouter; validator: CompiledValidator }> {
  const api = new OpenAPIBackend({
    definition: structuredClone(document) as Document,
    // quick: no document validation at start (codegen validated it) and lazy validator compilation, which
    // never happens because every operation's validators are installed (createApiMiddleware).
    quick: true,
    strict: true,
    coerceTypes: true,
    apiRoot: '/',
  });
  await api.init();
  const router = new CompiledRouter({ definition: api.definition, apiRoot: api.apiRoot, ignoreTrailingSlashes: api.ignoreTrailingSlashes });
  const validator = new CompiledValidator({ definition: api.definition, router, lazyCompileValidators: true, coerceTypes: api.coerceTypes });
  return { router, validator };
}

/**
 * The OpenAPI dispatcher: openapi-backend matches the route (through the compiled router), the request is
 * authenticated, validated and coerced with the precompiled validators, then the operation's handler is called.
 *
 * The service (src/app.ts) and the dispatch benchmark (bench/dispatch.ts) both build it here; the benchmark
 * passes a padded document with its own operation table, validators (emitted by codegen/validators.ts) and
 * handlers. Nothing is compiled at start or on a first request: routing is compiled once by CompiledRouter
 * and every operation must come with its precompiled validators, or creation fails (run `npm run codegen`).
 */
export async function createApiMiddleware(options: ApiMiddlewareOptions): Promise<Middleware> {
  const { services } = options;
  const clients = options.clients ?? DIRECT_CLIENTS;
  const { router, validator } = await compiledBackend(options.document ?? services.document);
  const { routes, requestValidators } = routeTable(
    router,
    options.operations ?? operationTable,
    options.handlers,
    options.validators ?? precompiledValidators,
  );
  (validator as unknown as { requestValidators: Record<string, unknown> }).requestValidators = requestValidators;
  const take = budgetOf(options.limiter, clients);

  // openapi-backend's request pipeline (route, security, validation with coercion, handler) driven here
  // step by step: its handleRequest parses the request four times and matches it twice; this matches once
  // and parses once, inside the validator.
  const routed = route(router, routes, take); // 404, 405 (after the address's budget: 429)
  const session = bearer(services.accounts);
  const keys = [rsaPss(services.apiKeys), hmac(services.apiKeys)];
  const steps: Step[] = [
    signedBudget(take, session, keys), // 429 before a key is looked up or a signature verified
    authenticate(session, keys),
    budget(take), // 429
    admit, // 401
    role, // 403: a caller lacking the role never learns the schema
    body({ timeoutMs: options.bodyTimeoutMs ?? 30_000 }), // 415, 408, 413, 400
    verifySignature(services.apiKeys), // 401: an order-book signature covers the body; replays
    validate(validator), // 400
    countedBudget(take), // 429 for the items a request counts
    dispatch(services, clients),
  ];
  return async (koa) => {
    const call = routed(koa);
    if (!call) return;
    for (const step of steps) {
      // A step that answers at once is not awaited: no turn of the microtask queue for it.
      const going = step(call);
      if (going === false || (going !== true && !(await going))) return;
    }
  };
}

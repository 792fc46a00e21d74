import { createRequire } from 'node:module';
import type { Context as KoaContext, Middleware } from 'koa';
import { OpenAPIBackend, type Context, type Document } from 'openapi-backend';
import type { ErrorObject } from 'ajv';
import { operationTable, type OperationEntry } from '../generated/operations.js';
import type { Account } from '../domain/accounts/service.js';
import { forbidden, invalid, type ErrorDetail } from '../domain/errors.js';
import type { Services } from '../services.js';
import { sendError } from './errors.js';
import { CompiledRouter } from './router.js';
import type { ApiRequest, HandlerRegistry } from './types.js';

const require = createRequire(import.meta.url);

/** Compiled by codegen from the same document (see codegen/validators.ts). */
const precompiledValidators = require('../generated/request-validators.cjs') as Record<string, unknown[]>;

const LOCATIONS: Record<string, ErrorDetail['location']> = { query: 'query', path: 'path', header: 'header', requestBody: 'body' };
const LOCATION_NAMES = { query: 'query parameter', path: 'path parameter', header: 'header', body: 'request body' } as const;

/** Ajv's errors as the envelope's details, the first one as the message: "query parameter 'limit' must be integer". */
export function describeValidationErrors(errors: ErrorObject[]): { message: string; details: ErrorDetail[] } {
  const details = errors.map((error): ErrorDetail => {
    const [, head = '', ...rest] = error.instancePath.split('/');
    const location = LOCATIONS[head];
    const missing = (error.params as { missingProperty?: string }).missingProperty;
    if (location && location !== 'body') {
      const name = rest[0] ?? missing ?? '';
      return { location, path: name, message: `${LOCATION_NAMES[location]} '${name}' ${missing && !rest[0] ? 'is required' : (error.message ?? 'is invalid')}` };
    }
    if (location === 'body' || error.instancePath === '' && missing === 'requestBody') {
      const pointer = `/${rest.join('/')}`;
      const subject = pointer === '/' ? LOCATION_NAMES.body : `${LOCATION_NAMES.body} field '${rest.join('.')}'`;
      const text = missing === 'requestBody' ? 'is required' : (error.message ?? 'is invalid');
      const allowed = (error.params as { allowedValues?: unknown[] }).allowedValues;
      const extra = (error.params as { additionalProperty?: string }).additionalProperty;
      const suffix = allowed ? `: ${allowed.join(', ')}` : extra ? `: '${extra}'` : '';
      return { location: 'body', path: pointer, message: `${subject} ${text}${suffix}` };
    }
    return { message: error.message ?? 'invalid request' };
  });
  return { message: details[0]?.message ?? 'invalid request', details };
}

function bearerToken(header: unknown): string | undefined {
  if (typeof header !== 'string') return undefined;
  const match = /^Bearer\s+([A-Za-z0-9._~+/=-]{1,512})\s*$/i.exec(header);
  return match?.[1];
}

function clampQuery(query: Record<string, unknown>, maxima: OperationEntry['clampMaxima']): Record<string, unknown> {
  for (const [name, maximum] of Object.entries(maxima)) {
    const value = query[name];
    if (typeof value === 'number' && value > maximum) query[name] = maximum;
  }
  return query;
}

function decodePathParams(params: Record<string, string>): Record<string, string> {
  const decoded: Record<string, string> = {};
  for (const [name, value] of Object.entries(params)) {
    try {
      decoded[name] = decodeURIComponent(value);
    } catch {
      throw invalid(`path parameter '${name}' is not validly percent-encoded`, [{ location: 'path', path: name, message: 'bad percent-encoding' }]);
    }
  }
  return decoded;
}

/**
 * The OpenAPI dispatcher: openapi-backend matches the route (through the compiled router), authenticates,
 * validates and coerces the request with the precompiled validators, then calls the operation's handler.
 */
export async function createApiMiddleware(options: {
  document: object;
  handlers: HandlerRegistry;
  services: Services;
}): Promise<Middleware> {
  const { handlers, services } = options;
  const api = new OpenAPIBackend({
    definition: structuredClone(options.document) as Document,
    quick: true,
    strict: true,
    coerceTypes: true,
    apiRoot: '/',
  });
  await api.init();
  const router = new CompiledRouter({ definition: api.definition, apiRoot: '/' });
  api.router = router;
  const validator = api.validator as unknown as { router: CompiledRouter; requestValidators: Record<string, unknown> };
  validator.router = router;
  validator.requestValidators = { ...precompiledValidators };

  api.registerSecurityHandler('bearerAuth', async (c: Context, koa: KoaContext) => {
    const token = bearerToken(c.request.headers.authorization);
    if (!token) return false;
    try {
      return (await services.accounts.authenticate(token)) ?? false;
    } catch (error) {
      // A database failure is not an authentication failure: rethrown by unauthorizedHandler as a 500.
      koa.state.authError = error;
      return false;
    }
  });

  api.register({
    notFound: (c: Context, koa: KoaContext) => sendError(koa, 'not_found', `no route ${koa.method} ${koa.path}`),
    methodNotAllowed: (c: Context, koa: KoaContext) => sendError(koa, 'method_not_allowed', `${koa.method} is not allowed on ${koa.path}`),
    validationFail: (c: Context, koa: KoaContext) => {
      const { message, details } = describeValidationErrors((c.validation.errors ?? []) as ErrorObject[]);
      sendError(koa, 'invalid_request', message, details);
    },
    unauthorizedHandler: (c: Context, koa: KoaContext) => {
      if (koa.state.authError) throw koa.state.authError;
      sendError(koa, 'unauthorized', 'missing or invalid bearer token');
    },
  });

  for (const [operationId, entry] of Object.entries(operationTable) as Array<[string, OperationEntry]>) {
    const implementation = handlers[entry.handler] as (request: ApiRequest<never>, deps: unknown) => Promise<{ status: number; body: unknown; headers?: Record<string, string> }>;
    api.register(operationId, async (c: Context, koa: KoaContext) => {
      const account = (c.security?.bearerAuth || undefined) as Account | undefined;
      if (entry.requiredRole && account?.role !== entry.requiredRole) throw forbidden(`requires role ${entry.requiredRole}`);
      const request = {
        operationId,
        params: decodePathParams(c.request.params as Record<string, string>),
        query: clampQuery(c.request.query as Record<string, unknown>, entry.clampMaxima),
        body: c.request.requestBody,
        account,
        token: account ? bearerToken(c.request.headers.authorization) : undefined,
        requestId: String(koa.state.requestId ?? ''),
      } as unknown as ApiRequest<never>;
      const reply = await implementation(request, { services, koa });
      koa.status = reply.status;
      if (reply.headers) koa.set(reply.headers);
      koa.body = reply.body;
    });
  }

  return async (koa) => {
    await api.handleRequest(
      { method: koa.method, path: koa.path, query: koa.query as Record<string, string | string[]>, headers: koa.headers as Record<string, string | string[]>, body: (koa.request as { body?: unknown }).body },
      koa,
    );
  };
}

import type { Context } from 'koa';
import type { Operation, Request } from 'openapi-backend';
import type { Account } from '../../domain/accounts/service.js';
import type { KeyPrincipal, SignatureCheck } from '../../domain/api-keys/service.js';
import type { RateLimitClass } from '../../config.js';
import type { NumericType } from '../query.js';
import type { ApiRequest, HandlerDeps } from '../../handlers/types.js';

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

/** What an operation implementation looks like to the dispatcher (HandlerRegistry's entries, untyped). */
export type OperationImplementation = (
  request: ApiRequest<never>,
  deps: HandlerDeps,
) => Promise<{ status: number | string; body: unknown; headers?: Record<string, string> }>;

/**
 * The operation's security requirements (the router has merged in the document's), any one of which
 * suffices: none or an empty one, 'open'; bearerAuth alone, 'bearer'; bearerAuth, and also the headers of
 * both signature schemes (API keys), 'signed'; else 'closed' (a requirement that cannot be met).
 */
export type Access = 'open' | 'bearer' | 'signed' | 'closed';

/** What the dispatcher resolves once per operation. */
export interface Route {
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

/** Who makes a request: a session's account, or an API key's. */
export interface Caller {
  account?: Account;
  /** The session token as sent, when the caller is a session's. */
  token?: string;
  key?: KeyPrincipal;
  /** The key's signature, checked once the body has arrived (an order-book signature covers it). */
  signature?: (body: string) => SignatureCheck;
  /** Why the credentials sent are refused (401). */
  refused?: string;
}

/** One request on its way through the steps: what they have found out so far. */
export interface Call {
  readonly koa: Context;
  readonly route: Route;
  readonly operation: Operation;
  /** openapi-backend's view of the request (HEAD as GET), with the body once it is read. */
  readonly request: Request;
  /** The query as parsed (validation coerces it in place: it is this request's own object). */
  readonly query: Record<string, string | string[]>;
  caller: Caller;
  /** The body as received; '' until read, and for operations that take none. */
  bodyText: string;
  /** The path parameters as validated and coerced. */
  params?: unknown;
}

/**
 * One step of the dispatcher: true to go on, false once it has answered the request. A refusal that is a
 * DomainError (403, some 400s) is thrown instead, and answered by the request lifecycle.
 */
export type Step = (call: Call) => boolean | Promise<boolean>;

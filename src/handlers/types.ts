import type { Context as KoaContext } from 'koa';
import type { operations } from '../generated/api-types.js';
import type { HandlerName } from '../generated/operations.js';
import type { Account } from '../domain/accounts/service.js';
import type { KeyPrincipal } from '../domain/api-keys/service.js';
import type { Services } from '../domain/services.js';

type Op<K extends keyof operations> = operations[K];
type JsonOf<T> = T extends { content: { 'application/json': infer B } }
  ? B
  : T extends { content: { 'text/html': infer H } }
    ? H
    : undefined;
type Get<T, K extends PropertyKey> = T extends { [P in K]?: infer V } ? V : undefined;

/** What a handler receives: the request as validated (and coerced) against the document. */
export interface ApiRequest<K extends keyof operations> {
  operationId: string;
  params: Get<Op<K>['parameters'], 'path'>;
  query: NonNullable<Get<Op<K>['parameters'], 'query'>>;
  body: JsonOf<NonNullable<Get<Op<K>, 'requestBody'>>>;
  /** The authenticated account, on operations with a security requirement. */
  account: Account | undefined;
  /** The API key that signed the request, if one did. */
  apiKey: KeyPrincipal | undefined;
  /** The Bearer token as sent, for operations that act on the session itself. */
  token: string | undefined;
  requestId: string;
  /** The client address (see clientAddress: the socket's, or the one a TRUST_PROXY proxy forwards), on login and registration. */
  clientAddress: string | undefined;
}

/** One of the documented responses of the operation, typed by status code. */
export type Reply<K extends keyof operations> = {
  [S in keyof Op<K>['responses']]: {
    status: S;
    body: JsonOf<Op<K>['responses'][S]>;
    headers?: Record<string, string>;
  };
}[keyof Op<K>['responses']];

export interface HandlerDeps {
  services: Services;
  koa: KoaContext;
}

export type Handler<K extends keyof operations> = (request: ApiRequest<K>, deps: HandlerDeps) => Promise<Reply<K>>;

/** Exactly one implementation per handler the document names: a missing or extra one does not compile. */
export type HandlerRegistry = { [H in HandlerName]: H extends keyof operations ? Handler<H> : never };

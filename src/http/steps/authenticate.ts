import type { Context } from 'koa';
import type { Services } from '../../domain/services.js';
import { sendError } from '../errors.js';
import type { Call, Caller, Step } from './call.js';

/** One way a request says who makes it: the session token, or one of the API keys' signature schemes. */
export interface AuthScheme {
  /** Whether the request carries this scheme's credentials. */
  sent(headers: Context['request']['headers']): boolean;
  /** The caller the credentials name, or why they are refused. */
  callerOf(request: Context['request']): Promise<Caller>;
}

/** A header sent once, as a string of at most 2 KiB; undefined otherwise. */
export function headerOf(headers: Record<string, unknown>, name: string): string | undefined {
  const value = headers[name];
  return typeof value === 'string' && value.length <= 2048 ? value : undefined;
}

const SESSION_ONLY = 'this operation takes a session token (Authorization: Bearer) only: API keys do not reach account or admin operations';

/**
 * The caller of an operation that takes a token or a key (no other waits for the lookup): the session's
 * when `Authorization` is sent or the operation takes a token only, else that of the first API key scheme
 * whose headers are sent (README, "API keys for bots"). Nothing is refused here: see `admit`.
 */
export function authenticate(session: AuthScheme, keys: readonly AuthScheme[]): Step {
  return async (call) => {
    const { route, koa } = call;
    const scheme = schemeOf(call, session, keys);
    if (scheme === undefined) return true;
    const caller = await scheme.callerOf(koa.request);
    if (!caller.account && route.access === 'bearer' && keys.some((key) => key.sent(koa.request.headers))) caller.refused = SESSION_ONLY;
    if (caller.account) koa.state.accountId = caller.account.id;
    call.caller = caller;
    return true;
  };
}

/** The scheme that authenticates a request (see authenticate); undefined for an operation that takes neither token nor key. */
export function schemeOf({ route, koa }: Call, session: AuthScheme, keys: readonly AuthScheme[]): AuthScheme | undefined {
  if (route.access !== 'bearer' && route.access !== 'signed') return undefined;
  const { headers } = koa.request;
  const keySent = keys.find((scheme) => scheme.sent(headers));
  return route.access === 'bearer' || keySent === undefined || session.sent(headers) ? session : keySent;
}

/** 401 when the operation needs a caller and the request has none (or no requirement of it can be met). */
export const admit: Step = ({ koa, route, caller }) => {
  if (route.access === 'closed' || (route.access !== 'open' && !caller.account)) {
    sendError(koa, 'unauthorized', caller.refused ?? 'missing or invalid bearer token');
    return false;
  }
  return true;
};

/** 401 when a key's signature does not hold (an order-book one covers the body: this runs once it has arrived) or was used before. */
export function verifySignature(apiKeys: Services['apiKeys']): Step {
  return async ({ koa, caller, bodyText }) => {
    const signature = caller.signature?.(bodyText);
    if (signature && 'refused' in signature) {
      sendError(koa, 'unauthorized', signature.refused);
      return false;
    }
    if (signature && !(await apiKeys.firstUse(signature))) {
      sendError(koa, 'unauthorized', 'this signature was used before: sign every request afresh (replays are refused)');
      return false;
    }
    if (caller.key) koa.state.apiKeyId = caller.key.keyId;
    return true;
  };
}

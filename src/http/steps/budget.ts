import type { Context } from 'koa';
import type { ClientAddressing, RateLimitClass } from '../../config.js';
import { sendError } from '../errors.js';
import { clientAddress } from '../../admission/client-address.js';
import { limitHeaders, type RequestLimiter } from '../../admission/rate-limit.js';
import { schemeOf, type AuthScheme } from './authenticate.js';
import type { Caller, Step } from './call.js';

/**
 * Takes `points` from the request's budget in `limitClass` (the account's when the caller has one, else the
 * client address's; a key's request from the key's own budget too): the RateLimit-* headers (of the budget
 * with the fewest requests left) go on the answer, whatever it is; over budget, it answers 429 and gives
 * false. `counted`: what the request counts in all (x-rate-limit-count), for the refusal.
 */
export type Budget = (koa: Context, limitClass: RateLimitClass, caller: Caller, points?: number, counted?: number) => boolean;

/** The budgets of a limiter; without one, every request is within budget. */
export function budgetOf(limiter: RequestLimiter | undefined, clients: ClientAddressing): Budget {
  if (!limiter) return () => true;
  return (koa, limitClass, { account, key }, points = 1, counted = 1) => {
    let decision = account ? limiter.take(limitClass, 'account', account.id, points) : limiter.take(limitClass, 'address', clientAddress(koa.req, clients), points);
    const ofKey = key && limiter.takeKey(limitClass, key.keyId, points);
    if (ofKey && (!ofKey.allowed || (decision.allowed && ofKey.remaining < decision.remaining))) decision = ofKey;
    const headers = limitHeaders(decision);
    for (const name in headers) koa.res.setHeader(name, headers[name]!);
    if (decision.allowed) return true;
    const asked = counted > 1 ? ` (this request counts ${counted})` : '';
    sendError(koa, 'rate_limited', `too many requests: the ${limitClass} budget of ${decision.limit} requests is spent${asked}; retry in ${decision.resetSecs} s`);
    return false;
  };
}

/** The request, taken from the budget of its operation's class (429). */
export function budget(take: Budget): Step {
  return ({ koa, route, caller }) => take(koa, route.limitClass, caller);
}

/**
 * A request signed with an API key, taken from its client address's budget of its operation's class before
 * the key is looked up or the signature verified (429): verifying is the costliest check a client can ask
 * for, so one over budget costs none. The account's and the key's budgets are taken once it is verified.
 */
export function signedBudget(take: Budget, session: AuthScheme, keys: readonly AuthScheme[]): Step {
  return (call) => {
    const scheme = schemeOf(call, session, keys);
    return scheme === undefined || scheme === session || take(call.koa, call.route.limitClass, {});
  };
}

/**
 * A request that counts the items of a body array (x-rate-limit-count) draws the rest of them once the body
 * is known to be valid: one was taken with the request (429).
 */
export function countedBudget(take: Budget): Step {
  return ({ koa, route, caller, request }) => {
    const { rateLimitCount } = route.entry;
    // `/`: the body is the array itself.
    const items: unknown = rateLimitCount === '/' ? request.body : (request.body as Record<string, unknown> | undefined)?.[rateLimitCount ?? ''];
    const counted = rateLimitCount ? (items as unknown[]).length : 1;
    return counted <= 1 || take(koa, route.limitClass, caller, counted - 1, counted);
  };
}

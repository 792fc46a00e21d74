import type { IncomingMessage } from 'node:http';
import { RateLimiterMemory, type RateLimiterRes } from 'rate-limiter-flexible';
import type { KeyRateLimitClass, RateBudget, RateLimitClass } from '../config.js';

/** What a request's budget says: allowed or not, and the RateLimit-* header values. */
export interface LimitDecision {
  allowed: boolean;
  limit: number;
  remaining: number;
  /** Seconds until the window starts again (at least 1). */
  resetSecs: number;
}

export interface RequestLimiterOptions {
  budgets: Record<RateLimitClass, RateBudget>;
  /** Each API key's own budgets (its signed requests also draw on its account's). */
  keyBudgets?: Record<KeyRateLimitClass, RateBudget>;
  /** Worker processes sharing the address: each allows its share of every budget (at least 1 request). */
  processes: number;
}

/** The client address: the socket's, or behind a trusted proxy the last X-Forwarded-For entry (the one that proxy added). */
export function clientAddress(req: IncomingMessage, trustProxy: boolean): string {
  if (trustProxy) {
    const header = req.headers['x-forwarded-for'];
    const value = Array.isArray(header) ? header.at(-1) : header;
    if (value) {
      const last = value.slice(value.lastIndexOf(',') + 1).trim();
      if (last !== '') return last;
    }
  }
  return req.socket.remoteAddress ?? 'unknown';
}

/**
 * The request budgets of this process: a fixed window per class and client (the account when the request
 * carries a valid token, else the client address), kept in memory (rate-limiter-flexible). Budgets are per
 * process: with several worker processes each allows budget / processes; several instances each allow it
 * in full (README, "Abuse controls").
 */
export class RequestLimiter {
  readonly #limiters = new Map<string, { limiter: RateLimiterMemory; points: number }>();

  constructor(options: RequestLimiterOptions) {
    const budgets: Array<[string, RateBudget]> = [
      ...Object.entries(options.budgets),
      ...Object.entries(options.keyBudgets ?? {}).map(([name, budget]): [string, RateBudget] => [`key-${name}`, budget]),
    ];
    for (const [name, budget] of budgets) {
      const points = Math.max(1, Math.floor(budget.points / Math.max(1, options.processes)));
      // Each budget has a store of its own: no prefix to tell their keys apart (one string less built and hashed per request).
      this.#limiters.set(name, { points, limiter: new RateLimiterMemory({ points, duration: budget.durationSecs, keyPrefix: '' }) });
    }
  }

  /** Takes `points` (one request, or the items a request counts) from the budget of `key` in `name`. */
  take(name: RateLimitClass, key: string, points = 1): Promise<LimitDecision> {
    return consume(this.#limiters.get(name)!, key, points);
  }

  /**
   * Takes a signed request from its API key's budget in `name` (undefined when keys have no budget of that
   * class); the request also draws on its account's (take).
   */
  takeKey(name: RateLimitClass, keyId: string, points = 1): Promise<LimitDecision> | undefined {
    const limiter = this.#limiters.get(`key-${name}`);
    return limiter && consume(limiter, keyId, points);
  }
}

function consume({ limiter, points }: { limiter: RateLimiterMemory; points: number }, key: string, taken: number): Promise<LimitDecision> {
  return limiter.consume(key, taken).then(
    (res) => decision(true, points, res),
    (refused: unknown) => {
      // rate-limiter-flexible rejects with its result when the budget is spent, with an Error on failure
      if (refused instanceof Error) throw refused;
      return decision(false, points, refused as RateLimiterRes);
    },
  );
}

function decision(allowed: boolean, limit: number, res: RateLimiterRes): LimitDecision {
  return { allowed, limit, remaining: res.remainingPoints, resetSecs: Math.max(1, Math.ceil(res.msBeforeNext / 1000)) };
}

/** The RateLimit-* headers (and Retry-After on a refusal) of a decision. */
export function limitHeaders(decision: LimitDecision): Record<string, string> {
  const headers: Record<string, string> = {
    'RateLimit-Limit': String(decision.limit),
    'RateLimit-Remaining': String(decision.remaining),
    'RateLimit-Reset': String(decision.resetSecs),
  };
  if (!decision.allowed) headers['Retry-After'] = String(decision.resetSecs);
  return headers;
}

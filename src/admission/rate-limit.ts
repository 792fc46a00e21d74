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

interface Window {
  used: number;
  endsAt: number;
}

/**
 * One budget's fixed windows, a window per key: a key's first request opens a window of the budget's
 * duration; every request in it (a refused one too) uses its points; the request that takes it past
 * `points` and those after it are refused until the window ends.
 *
 * Windows are kept in two generations of one duration each: new windows go into the current one, and when
 * a duration has passed the current generation becomes the previous one and the previous one is dropped
 * whole, every window in it having ended (each was opened at most one duration before the generation
 * ended). Memory holds the keys of about the last two durations, and nothing is done per key to forget
 * them: deleting 100,000 ended windows one by one takes about 30 ms, on the request that would do it.
 *
 * Counted here, synchronously, on every request: rate-limiter-flexible (the login guard's and the feed's
 * limiter) answers each take with a promise, which costs about three times the counting itself.
 */
export class FixedWindows {
  #current = new Map<string, Window>();
  #previous = new Map<string, Window>();
  readonly #durationMs: number;
  /** When the current generation ends. */
  #generationEnd: number;

  constructor(
    readonly points: number,
    durationSecs: number,
    now = Date.now(),
  ) {
    this.#durationMs = durationSecs * 1000;
    this.#generationEnd = now + this.#durationMs;
  }

  /** Keys with a window kept (ended ones included until their generation is dropped). */
  get size(): number {
    return this.#current.size + this.#previous.size;
  }

  take(key: string, points: number, now = Date.now()): LimitDecision {
    if (now >= this.#generationEnd) this.#nextGeneration(now);
    let window = this.#current.get(key) ?? this.#previous.get(key);
    if (window === undefined || window.endsAt <= now) {
      window = { used: 0, endsAt: now + this.#durationMs };
      this.#current.set(key, window);
    }
    window.used += points;
    return {
      allowed: window.used <= this.points,
      limit: this.points,
      remaining: Math.max(this.points - window.used, 0),
      resetSecs: Math.max(1, Math.ceil((window.endsAt - now) / 1000)),
    };
  }

  #nextGeneration(now: number): void {
    // after a whole generation without a request, the current one's windows have ended too
    this.#previous = now >= this.#generationEnd + this.#durationMs ? new Map<string, Window>() : this.#current;
    this.#current = new Map();
    this.#generationEnd = now + this.#durationMs;
  }
}

/** The windows of a budget shared by `processes` worker processes: each allows its share (at least 1 request). */
export function processShare(budget: RateBudget, processes: number): FixedWindows {
  return new FixedWindows(Math.max(1, Math.floor(budget.points / Math.max(1, processes))), budget.durationSecs);
}

/** Who a request is counted against: its account (with a valid token or key), else its client address. */
export type Counted = 'account' | 'address';

/**
 * The request budgets of this process: a fixed window per class and client (the account when the request
 * carries a valid token, else the client address), kept in memory. Budgets are per process: with several
 * worker processes each allows budget / processes; several instances each allow it in full (README,
 * "Abuse controls"). Accounts and addresses have windows of their own, so a client's key is its id or
 * address as it is (whose hash the runtime keeps), not a string built per request.
 */
export class RequestLimiter {
  readonly #budgets = new Map<string, Record<Counted, FixedWindows>>();
  readonly #keyBudgets = new Map<string, FixedWindows>();

  constructor(options: RequestLimiterOptions) {
    for (const [name, budget] of Object.entries(options.budgets)) {
      this.#budgets.set(name, { account: processShare(budget, options.processes), address: processShare(budget, options.processes) });
    }
    for (const [name, budget] of Object.entries(options.keyBudgets ?? {})) this.#keyBudgets.set(name, processShare(budget, options.processes));
  }

  /** Takes `points` (one request, or the items a request counts) from the budget in `name` of an account or an address. */
  take(name: RateLimitClass, counted: Counted, id: string, points = 1): LimitDecision {
    return this.#budgets.get(name)![counted].take(id, points);
  }

  /**
   * Takes a signed request from its API key's budget in `name` (undefined when keys have no budget of that
   * class); the request also draws on its account's (take).
   */
  takeKey(name: RateLimitClass, keyId: string, points = 1): LimitDecision | undefined {
    return this.#keyBudgets.get(name)?.take(keyId, points);
  }
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

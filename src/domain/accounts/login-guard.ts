import { RateLimiterMemory, type RateLimiterRes } from 'rate-limiter-flexible';

export interface LoginGuardSettings {
  /** Failed sign-ins allowed before the back-off starts (per email and address; four times as many per email, or per address, alone). */
  freeFailures: number;
  /** The first back-off; each further failure doubles it. */
  backoffBaseMs: number;
  /** The longest back-off: nobody is ever locked out for longer. */
  backoffMaxSecs: number;
}

/** Failures are forgotten this long after the first one of a series (never less than the longest back-off). */
const FAILURE_WINDOW_SECS = 3600;
/** The per-email and per-address counts allow this many times the failures of one email from one address. */
const WIDE_FACTOR = 4;

/**
 * Failed sign-ins with exponential back-off, counted three ways: one email from one address, one email from
 * anywhere (a distributed guess at one account, with a higher threshold) and one address for any email (one
 * client guessing many accounts, higher threshold too). Past a count's threshold, each further failure
 * blocks further attempts for base x 2^k, capped at the maximum: a block always ends, so an attacker can
 * slow a victim's sign-in but never lock the account. A success clears its email-and-address count.
 * Counts live in this process's memory (rate-limiter-flexible).
 */
export class LoginGuard {
  readonly #failures: RateLimiterMemory;
  readonly #blocks: RateLimiterMemory;

  constructor(private readonly settings: LoginGuardSettings) {
    this.#failures = new RateLimiterMemory({ points: Number.MAX_SAFE_INTEGER, duration: Math.max(FAILURE_WINDOW_SECS, settings.backoffMaxSecs), keyPrefix: 'login-failures' });
    this.#blocks = new RateLimiterMemory({ points: 1, duration: 1, keyPrefix: 'login-blocks' });
  }

  #keys(email: string, address: string): Array<[key: string, free: number]> {
    const normalized = email.trim().toLowerCase();
    const { freeFailures } = this.settings;
    return [
      [`pair:${normalized}|${address}`, freeFailures],
      [`email:${normalized}`, freeFailures * WIDE_FACTOR],
      [`address:${address}`, freeFailures * WIDE_FACTOR],
    ];
  }

  /** Seconds until a sign-in of `email` from `address` may be tried again, or undefined if it may now. */
  async retryAfter(email: string, address: string): Promise<number | undefined> {
    let waitMs = 0;
    for (const [key] of this.#keys(email, address)) {
      const res: RateLimiterRes | null = await this.#blocks.get(key);
      if (res && res.consumedPoints > 1 && res.msBeforeNext > 0) waitMs = Math.max(waitMs, res.msBeforeNext);
    }
    return waitMs > 0 ? waitMs / 1000 : undefined;
  }

  async failed(email: string, address: string): Promise<void> {
    for (const [key, free] of this.#keys(email, address)) {
      const res = await this.#failures.penalty(key, 1);
      const beyond = res.consumedPoints - free;
      if (beyond <= 0) continue;
      const ms = Math.min(this.settings.backoffMaxSecs * 1000, this.settings.backoffBaseMs * 2 ** Math.min(beyond - 1, 40));
      await this.#blocks.block(key, ms / 1000);
    }
  }

  async succeeded(email: string, address: string): Promise<void> {
    const [[pair]] = this.#keys(email, address) as [[string, number]];
    await this.#failures.delete(pair);
    await this.#blocks.delete(pair);
  }
}

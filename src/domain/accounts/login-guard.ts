import { RateLimiterMemory, type RateLimiterRes } from 'rate-limiter-flexible';

export interface LoginGuardSettings {
  /** Failed sign-ins allowed before the back-off starts (per email and address; four times as many per email, or per address, alone). */
  freeFailures: number;
  /** The first back-off; each further failure doubles it. */
  backoffBaseMs: number;
  /** The longest back-off: nobody is ever held back for longer. */
  backoffMaxSecs: number;
}

/** Failures are forgotten this long after the first one of a series (never less than the longest back-off). */
const FAILURE_WINDOW_SECS = 3600;
/** The per-email and per-address counts allow this many times the failures of one email from one address. */
const WIDE_FACTOR = 4;
/** An address that signed in to an email is trusted for it this long after its last success. */
const KNOWN_ADDRESS_SECS = 7 * 24 * 3600;

/**
 * Failed sign-ins with exponential back-off, counted three ways: one email from one address, one email from
 * anywhere (a distributed guess at one account, with a higher threshold) and one address for any email (one
 * client guessing many accounts, higher threshold too). Past a count's threshold, each further failure
 * blocks further attempts for base x 2^k, capped at the maximum.
 *
 * The back-off of one email from anywhere holds back only the addresses that failed for that email
 * themselves and never signed in to it: an address with no failure for the email (the owner's, however
 * many others guess) or one that signed in to it within KNOWN_ADDRESS_SECS is never held back by others'
 * failures, so nobody can lock an owner out. The worst an owner meets is the back-off of their own
 * failures from their own address: at most `backoffMaxSecs` a failure. A success clears its
 * email-and-address count. Counts live in this process's memory (rate-limiter-flexible).
 */
export class LoginGuard {
  readonly #failures: RateLimiterMemory;
  readonly #blocks: RateLimiterMemory;
  readonly #known: RateLimiterMemory;

  constructor(private readonly settings: LoginGuardSettings) {
    this.#failures = new RateLimiterMemory({ points: Number.MAX_SAFE_INTEGER, duration: Math.max(FAILURE_WINDOW_SECS, settings.backoffMaxSecs), keyPrefix: 'login-failures' });
    this.#blocks = new RateLimiterMemory({ points: 1, duration: 1, keyPrefix: 'login-blocks' });
    this.#known = new RateLimiterMemory({ points: Number.MAX_SAFE_INTEGER, duration: KNOWN_ADDRESS_SECS, keyPrefix: 'login-known' });
  }

  #keys(email: string, address: string): { pair: string; email: string; address: string } {
    const normalized = email.trim().toLowerCase();
    return { pair: `pair:${normalized}|${address}`, email: `email:${normalized}`, address: `address:${address}` };
  }

  /** Seconds until a sign-in of `email` from `address` may be tried again, or undefined if it may now. */
  async retryAfter(email: string, address: string): Promise<number | undefined> {
    const keys = this.#keys(email, address);
    const held = [keys.pair, keys.address];
    // Others' failures of this email hold back only an address that failed for it and is not known to it.
    if ((await this.#failures.get(keys.pair)) && !(await this.#known.get(keys.pair))) held.push(keys.email);
    let waitMs = 0;
    for (const key of held) {
      const res: RateLimiterRes | null = await this.#blocks.get(key);
      if (res && res.consumedPoints > 1 && res.msBeforeNext > 0) waitMs = Math.max(waitMs, res.msBeforeNext);
    }
    return waitMs > 0 ? waitMs / 1000 : undefined;
  }

  async failed(email: string, address: string): Promise<void> {
    const keys = this.#keys(email, address);
    const { freeFailures } = this.settings;
    const counts: Array<[string, number]> = [
      [keys.pair, freeFailures],
      [keys.email, freeFailures * WIDE_FACTOR],
      [keys.address, freeFailures * WIDE_FACTOR],
    ];
    for (const [key, free] of counts) {
      const res = await this.#failures.penalty(key, 1);
      const beyond = res.consumedPoints - free;
      if (beyond <= 0) continue;
      await this.#blocks.block(key, backoffMs(this.settings, beyond) / 1000);
    }
  }

  async succeeded(email: string, address: string): Promise<void> {
    const { pair } = this.#keys(email, address);
    await this.#failures.delete(pair);
    await this.#blocks.delete(pair);
    await this.#known.set(pair, 1, KNOWN_ADDRESS_SECS);
  }
}

/** The back-off after the `beyond`-th failure past the free ones: base x 2^(beyond-1), at most the maximum. */
function backoffMs(settings: LoginGuardSettings, beyond: number): number {
  return Math.min(settings.backoffMaxSecs * 1000, settings.backoffBaseMs * 2 ** Math.min(beyond - 1, 40));
}

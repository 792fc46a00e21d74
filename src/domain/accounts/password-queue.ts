import pLimit, { type LimitFunction } from 'p-limit';
import { rateLimited } from '../errors.js';

export interface PasswordQueueSettings {
  /** Password hashes computed at once (each takes a libuv thread and tens of MiB for a fraction of a second). */
  concurrency: number;
  /** Hashes waiting at most; one more is refused at once (429), before any hashing. */
  queue: number;
}

/**
 * Bounds the CPU password hashing takes (p-limit): a burst of sign-ins or registrations waits its turn
 * here, or is refused at once when too many already wait, instead of filling the thread pool the rest of
 * the service needs.
 */
export class PasswordQueue {
  readonly #limit: LimitFunction;

  constructor(private readonly settings: PasswordQueueSettings) {
    this.#limit = pLimit(settings.concurrency);
  }

  run<T>(work: () => Promise<T>): Promise<T> {
    if (this.#limit.activeCount >= this.settings.concurrency && this.#limit.pendingCount >= this.settings.queue) {
      return Promise.reject(rateLimited('too many sign-ins in progress: retry in a moment', 1));
    }
    return this.#limit(work);
  }
}

import type { Db } from '../../db/knex.js';
import { forgetExpiredSignatures, recordSignatures } from '../../db/repositories/api-keys.js';

interface Pending {
  digest: Buffer;
  expiresAt: Date;
  resolve: (fresh: boolean) => void;
  reject: (error: unknown) => void;
}

/**
 * Refuses a signature seen before, in any process: each accepted signature's digest is inserted into an
 * unlogged table (migration 0021) with ON CONFLICT DO NOTHING, and one that is already there is a replay.
 * The signed requests that arrive in one turn of the event loop share one insert, so that under load the
 * check costs a fraction of a round trip per request; a digest named twice in one batch is a replay at once.
 */
export class ReplayGuard {
  #batch: Pending[] = [];
  #sweep: NodeJS.Timeout | undefined;

  constructor(
    private readonly db: Db,
    private readonly onError: (error: unknown) => void = () => undefined,
  ) {}

  /** Whether `digest` is new (and is now recorded until `expiresAt`). */
  check(digest: Buffer, expiresAt: Date): Promise<boolean> {
    return new Promise((resolve, reject) => {
      if (this.#batch.length === 0) setImmediate(() => void this.#flush());
      else if (this.#batch.some((pending) => pending.digest.equals(digest))) return resolve(false);
      this.#batch.push({ digest, expiresAt, resolve, reject });
    });
  }

  /** Deletes expired digests every `intervalMs` (several processes doing so is harmless). */
  startSweep(intervalMs: number): void {
    this.#sweep ??= setInterval(() => {
      forgetExpiredSignatures(this.db).catch(this.onError);
    }, intervalMs);
    this.#sweep.unref();
  }

  stop(): void {
    clearInterval(this.#sweep);
    this.#sweep = undefined;
  }

  async #flush(): Promise<void> {
    const batch = this.#batch;
    this.#batch = [];
    try {
      const fresh = new Set((await recordSignatures(this.db, batch.map((p) => p.digest), batch.map((p) => p.expiresAt))).map((digest) => digest.toString('hex')));
      for (const pending of batch) pending.resolve(fresh.has(pending.digest.toString('hex')));
    } catch (error) {
      for (const pending of batch) pending.reject(error);
    }
  }
}

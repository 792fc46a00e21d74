import type { Db } from '../../db/knex.js';
import { refreshEventRollups } from '../../db/repositories/trading.js';

/**
 * Event rollups (volume, liquidity, open interest) follow their markets, but not on the request path: the
 * markets a committed trading transaction changed are marked here, and `flush` (run every 250 ms by the
 * server's background loop, and when it stops) recomputes their events, once per event however many
 * changes there were. Never inside a trading transaction: the catalogue locks an event before its markets,
 * trading only markets, so taking an event's row there could deadlock with a resolution. Idempotent, so it
 * is safe with several processes (each refreshes what it committed, after committing it), and a failed
 * refresh is simply retried on the next flush.
 */
export class EventRollups {
  readonly #dirty = new Set<string>();
  #flushing: Promise<number> | undefined;

  constructor(private readonly db: Db) {}

  /** Markets whose figures a committed transaction changed. */
  mark(marketIds: Iterable<string>): void {
    for (const id of marketIds) if (id !== '') this.#dirty.add(id);
  }

  /**
   * Recomputes the rollups of the events of every market marked since the last flush; returns how many
   * markets that covered. One flush at a time (a call during one waits for it, then flushes again).
   */
  async flush(): Promise<number> {
    while (this.#flushing) await this.#flushing.catch(() => undefined);
    if (this.#dirty.size === 0) return 0;
    const marketIds = [...this.#dirty];
    this.#dirty.clear();
    this.#flushing = refreshEventRollups(this.db, marketIds).then(
      () => marketIds.length,
      (error: unknown) => {
        // Not lost: retried on the next flush.
        for (const id of marketIds) this.#dirty.add(id);
        throw error;
      },
    );
    try {
      return await this.#flushing;
    } finally {
      this.#flushing = undefined;
    }
  }
}

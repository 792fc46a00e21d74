import type { Db } from '../../db/knex.js';
import { marketsBehindCandles, refreshCandles } from '../../db/repositories/candles.js';
import { refreshEventRollups } from '../../db/repositories/trading.js';

/**
 * What follows a market's committed trading, off the request path: its event's figures (volume, liquidity,
 * open interest) and its candles (the trades not yet counted, and the book's best bid and ask and the open
 * interest as the close of the current minute, hour and day). The markets a committed trading transaction
 * changed are marked here, and `flush` (run every 250 ms by the server's background loop, and when it stops)
 * refreshes them, once per market however many changes there were. Never inside a trading transaction: the
 * catalogue locks an event before its markets, trading only markets, so taking an event's row there could
 * deadlock with a resolution; and the trading transaction is the exchange's hot path, which candle rows
 * (three per market, and a read of the book) slowed by a quarter. Both refreshes are idempotent, so they are
 * safe with several processes (each refreshes what it committed, after committing it), and a failed one is
 * simply retried on the next flush. The first flush also takes the markets whose trades the candles lack, left
 * by a process that stopped before refreshing them.
 */
export class MarketRollups {
  readonly #dirty = new Set<string>();
  #flushing: Promise<number> | undefined;
  #caughtUp = false;

  constructor(private readonly db: Db) {}

  /** Markets whose figures a committed transaction changed. */
  mark(marketIds: Iterable<string>): void {
    for (const id of marketIds) if (id !== '') this.#dirty.add(id);
  }

  /**
   * Refreshes the events and candles of every market marked since the last flush; returns how many markets
   * that covered. One flush at a time (a call during one waits for it, then flushes again).
   */
  async flush(): Promise<number> {
    while (this.#flushing) await this.#flushing.catch(() => undefined);
    this.#flushing = this.#refresh();
    try {
      return await this.#flushing;
    } finally {
      this.#flushing = undefined;
    }
  }

  async #refresh(): Promise<number> {
    if (!this.#caughtUp) {
      this.mark(await marketsBehindCandles(this.db));
      this.#caughtUp = true;
    }
    if (this.#dirty.size === 0) return 0;
    const marketIds = [...this.#dirty];
    this.#dirty.clear();
    try {
      await refreshEventRollups(this.db, marketIds);
      await refreshCandles(this.db, marketIds);
    } catch (error) {
      // Not lost: retried on the next flush.
      this.mark(marketIds);
      throw error;
    }
    return marketIds.length;
  }
}

import type { BookSnapshot } from './types.js';

interface Waiter {
  resolve(snapshot: BookSnapshot): void;
  reject(error: unknown): void;
}

/**
 * Order-book snapshots asked for in one turn of the event loop are read together, in one database read
 * (`read`, several markets at once), and concurrent askers of one market share its snapshot: a subscribe
 * naming 100 markets, or 100 subscribers of one market, costs one read instead of one per market per
 * subscriber.
 *
 * A snapshot is only shared by requests made before its read starts: a subscription registers before it
 * asks, so every record committed after the read's database snapshot reaches it (see Subscription).
 */
export class SnapshotBatcher {
  #pending: Map<string, Waiter[]> | undefined;

  constructor(
    private readonly read: (marketIds: string[]) => Promise<Map<string, BookSnapshot>>,
    /** Markets per read at most (a larger batch is split). */
    private readonly maxMarkets = 1000,
  ) {}

  snapshot(marketId: string): Promise<BookSnapshot> {
    if (!this.#pending) {
      this.#pending = new Map();
      setImmediate(() => this.#flush());
    }
    let waiters = this.#pending.get(marketId);
    if (!waiters) {
      waiters = [];
      this.#pending.set(marketId, waiters);
    }
    const list = waiters;
    return new Promise<BookSnapshot>((resolve, reject) => list.push({ resolve, reject }));
  }

  #flush(): void {
    const batch = this.#pending;
    this.#pending = undefined;
    if (!batch) return;
    const ids = [...batch.keys()];
    for (let start = 0; start < ids.length; start += this.maxMarkets) {
      const chunk = ids.slice(start, start + this.maxMarkets);
      this.read(chunk).then(
        (snapshots) => {
          for (const id of chunk) {
            const snapshot = snapshots.get(id);
            for (const waiter of batch.get(id)!) {
              if (snapshot) waiter.resolve(snapshot);
              else waiter.reject(new Error(`market ${id} not found`));
            }
          }
        },
        (error: unknown) => {
          for (const id of chunk) for (const waiter of batch.get(id)!) waiter.reject(error);
        },
      );
    }
  }
}

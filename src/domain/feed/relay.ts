import type { FeedRecord } from './types.js';

/**
 * Reads the outbox in order, per market, and hands each record to `publish` exactly once, in the market's
 * sequence order, whichever process wrote it.
 *
 * A notification (`market_id:seq:accounts,...`, sent after the writing transaction's commit by the process
 * that committed it, or by the transaction itself at its commit) marks its
 * markets dirty; one drain at a time reads every dirty market's records after the last one published. A
 * record no subscription of this process wants (its market and accounts have none) is not read at all:
 * its position is taken as published, provided it is the market's next one and nothing of the market is
 * being read. Commits of
 * one market happen in sequence order (the sequence is taken under the market's row lock, held until
 * commit), and a notification is sent only once its record is committed, so a record is read only once
 * everything before it in its market is committed (notifications may arrive out of order: a seq beyond the
 * next one is read, with what precedes it). After the listener's connection was lost, `resync` compares every
 * market's sequence with what was published and reads what was missed. A record found missing (pruned
 * before it could be read) is reported to `gap` once, and the market goes on from there. Records this process
 * wrote itself come by `committed` once their transaction has committed, and are published without being
 * read when nothing of their market comes before them.
 */

export interface RelaySource {
  /** Every market's latest sequence number. */
  sequences(): Promise<Array<[string, number]>>;
  /** Records after these positions, in (market, seq) order, at most `limit`. */
  read(after: ReadonlyArray<readonly [string, number]>, limit: number): Promise<FeedRecord[]>;
}

export interface RelayHandlers {
  /** Whether a subscription here may want a record of this market with these accounts ('*': any). */
  wants(marketId: string, accounts: readonly string[] | '*'): boolean;
  publish(record: FeedRecord): void;
  gap(marketId: string): void;
  error(error: unknown): void;
}

const READ_LIMIT = 1000;

export class FeedRelay {
  /** Last sequence published per market (a market not listed: nothing yet, its first record is 1). */
  readonly #last = new Map<string, number>();
  readonly #dirty = new Set<string>();
  /** Markets of the read in progress. */
  #reading = new Set<string>();
  // eslint-disable-next-line no-unused-private-class-members -- read by `??=` below, which the rule counts as a write only
  #resyncing: Promise<void> | undefined;
  #draining: Promise<void> | undefined;
  #started = false;
  #stopped = false;
  /** Notifications received before the first resync finished: replayed after it. */
  #early: string[] = [];

  constructor(
    private readonly source: RelaySource,
    private readonly handlers: RelayHandlers,
  ) {}

  /**
   * After LISTEN (first start, or a reconnection): the first time, every market's current position is
   * taken as published (nobody subscribed before); later, markets that moved on are read.
   */
  async resync(): Promise<void> {
    const sequences = await this.source.sequences();
    if (!this.#started) {
      this.#started = true;
      for (const [marketId, seq] of sequences) if (seq > (this.#last.get(marketId) ?? 0)) this.#last.set(marketId, seq);
      const early = this.#early;
      this.#early = [];
      for (const payload of early) this.notified(payload);
      await this.drain();
      return;
    }
    for (const [marketId, seq] of sequences) if (seq > (this.#last.get(marketId) ?? 0)) this.#dirty.add(marketId);
    await this.drain();
  }

  /** A notification's payload. */
  notified(payload: string): void {
    if (!this.#started) {
      this.#early.push(payload);
      return;
    }
    if (payload === '*') {
      // Too many records to list: compare every market's position.
      this.#resyncing ??= this.resync()
        .catch((error: unknown) => this.handlers.error(error))
        .finally(() => {
          this.#resyncing = undefined;
        });
      return;
    }
    for (const item of payload.split(',')) {
      const [marketId = '', seqText = '', accountList = '*'] = item.split(':');
      const seq = Number(seqText);
      if (!/^\d+$/.test(marketId) || !Number.isSafeInteger(seq)) continue;
      const last = this.#last.get(marketId) ?? 0;
      if (seq <= last) continue;
      const accounts = accountList === '*' ? '*' : accountList === '' ? [] : accountList.split('|');
      if (seq === last + 1 && !this.#dirty.has(marketId) && !this.#reading.has(marketId) && !this.handlers.wants(marketId, accounts)) {
        this.#last.set(marketId, seq);
        continue;
      }
      this.#dirty.add(marketId);
    }
    if (this.#dirty.size > 0) void this.drain();
  }

  /**
   * Records this process wrote, once their transaction has committed, in commit order: each is published at
   * once when it is its market's next one and nothing of the market is waiting to be read (the notification
   * that follows finds it published); otherwise its market is read as for a notification.
   */
  committed(records: readonly FeedRecord[]): void {
    // Before the first resync the positions are not known: the notification brings them.
    if (!this.#started || this.#stopped) return;
    for (const record of records) {
      const last = this.#last.get(record.marketId) ?? 0;
      if (record.seq <= last) continue;
      if (record.seq !== last + 1 || this.#dirty.has(record.marketId) || this.#reading.has(record.marketId)) {
        this.#dirty.add(record.marketId);
        continue;
      }
      this.#last.set(record.marketId, record.seq);
      try {
        this.handlers.publish(record);
      } catch (error) {
        this.handlers.error(error);
      }
    }
    if (this.#dirty.size > 0) void this.drain();
  }

  /** Reads until nothing is dirty; one drain at a time (a call during a drain waits for it). */
  drain(): Promise<void> {
    this.#draining ??= this.#drainLoop().finally(() => {
      this.#draining = undefined;
    });
    return this.#draining;
  }

  async stop(): Promise<void> {
    this.#stopped = true;
    await this.#draining;
  }

  /** Last published sequence of a market (tests, diagnostics). */
  position(marketId: string): number {
    return this.#last.get(marketId) ?? 0;
  }

  async #drainLoop(): Promise<void> {
    while (this.#dirty.size > 0 && !this.#stopped) {
      const batch = [...this.#dirty].map((marketId) => [marketId, this.#last.get(marketId) ?? 0] as const);
      this.#dirty.clear();
      this.#reading = new Set(batch.map(([marketId]) => marketId));
      let records: FeedRecord[];
      try {
        records = await this.source.read(batch, READ_LIMIT);
      } catch (error) {
        // The connection is down: resync reads everything once it is back.
        for (const [marketId] of batch) this.#dirty.add(marketId);
        this.#reading = new Set();
        this.handlers.error(error);
        return;
      }
      for (const record of records) {
        const last = this.#last.get(record.marketId) ?? 0;
        if (record.seq <= last) continue;
        if (record.seq !== last + 1) this.handlers.gap(record.marketId);
        this.#last.set(record.marketId, record.seq);
        try {
          this.handlers.publish(record);
        } catch (error) {
          this.handlers.error(error);
        }
      }
      this.#reading = new Set();
      if (records.length >= READ_LIMIT) for (const [marketId] of batch) this.#dirty.add(marketId);
    }
  }
}

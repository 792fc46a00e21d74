import { formatLots, formatTicks, lotsOf, TICKS_PER_DOT, ticksOf } from '../trading/money.js';
import type { PublishedRecord } from './messages.js';
import type { BookSnapshot, MarketFigures, TickerMsg } from './types.js';

/**
 * A market's ticker as this process follows it: its book's best bids (from a snapshot, then the book changes
 * of every later record) and its figures (last price, volume, open interest). Kept here, from the records,
 * rather than read in the trading transaction: the best bid and ask would cost that transaction two index
 * scans while it holds the market's lock. One per market that has ticker subscribers, shared by them.
 */
export class TickerBook {
  /** Lots resting per price (ticks) of the YES bids and of the NO bids. */
  readonly #yes = new Map<number, bigint>();
  readonly #no = new Map<number, bigint>();
  #figures: MarketFigures = { last_yes_price: null, volume: '0', open_interest: '0' };
  /** Feed position applied. */
  #after = 0;
  /** Records received before the snapshot (null once it is loaded). */
  pending: PublishedRecord[] | null = [];
  /** Time of the latest record seen (the ticker's `ts`). */
  lastTs = new Date(0).toISOString();

  constructor(
    readonly marketId: string,
    readonly ticker: string,
  ) {}

  /** Loads the snapshot, then the pending records after it. */
  load(snapshot: BookSnapshot): void {
    for (const level of snapshot.levels) {
      const ticks = ticksOf(level.yes_price);
      const lots = lotsOf(level.count);
      if (level.book_side === 'bid') this.#yes.set(ticks, lots);
      else this.#no.set(TICKS_PER_DOT - ticks, lots);
    }
    this.#figures = snapshot.figures;
    this.#after = snapshot.seq;
    const pending = this.pending ?? [];
    this.pending = null;
    for (const record of pending) this.apply(record);
  }

  /** Applies a record (ignored when at or before the position already applied); false when not loaded yet. */
  apply(record: PublishedRecord): boolean {
    if (this.pending !== null) {
      this.pending.push(record);
      this.lastTs = record.ts;
      return false;
    }
    this.lastTs = record.ts;
    if (record.seq <= this.#after) return true;
    this.#after = record.seq;
    const { book, market } = record.record.events;
    for (const change of book) {
      const side = change.side === 'yes' ? this.#yes : this.#no;
      const ticks = ticksOf(change.price);
      const delta = change.delta.startsWith('-') ? -lotsOf(change.delta.slice(1)) : lotsOf(change.delta);
      const next = (side.get(ticks) ?? 0n) + delta;
      if (next > 0n) side.set(ticks, next);
      else side.delete(ticks);
    }
    if (market) this.#figures = market;
    return true;
  }

  /** The ticker now; `key` (everything but the time) tells whether it changed. */
  message(): { key: string; json: string } {
    const best = (side: Map<number, bigint>) => (side.size === 0 ? undefined : Math.max(...side.keys()));
    const yesBid = best(this.#yes);
    const noBid = best(this.#no);
    const fields = {
      market_ticker: this.ticker,
      market_id: this.marketId,
      price: this.#figures.last_yes_price === null ? null : formatTicks(ticksOf(this.#figures.last_yes_price)),
      yes_bid: yesBid === undefined ? null : formatTicks(yesBid),
      yes_ask: noBid === undefined ? null : formatTicks(TICKS_PER_DOT - noBid),
      volume: formatLots(lotsOf(this.#figures.volume)),
      open_interest: formatLots(lotsOf(this.#figures.open_interest)),
    };
    const msg: TickerMsg = { ...fields, ts: this.lastTs };
    return { key: JSON.stringify(fields), json: JSON.stringify(msg) };
  }
}

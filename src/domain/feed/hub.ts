import { frame, type PublishedRecord } from './messages.js';
import { TickerBook } from './ticker.js';
import { isPrivateChannel, type BookSnapshot, type Channel, type OrderbookSnapshotMsg } from './types.js';

/**
 * The subscriptions of one process and the fan-out of records to them (in memory, no I/O).
 *
 * Every message of a subscription carries `seq`, one more than the previous message of that subscription.
 * A subscription skips one number when the feed lost records it should have carried (`gap`), so that the
 * client sees the gap and resubscribes.
 *
 * orderbook_delta: a market of the subscription starts `pending`; records that arrive meanwhile are kept
 * (bounded) until its snapshot is sent; then only records after the snapshot's feed position are applied.
 * Records of a market reach the hub in feed order (the relay guarantees it), so the snapshot plus the
 * deltas that follow it are exactly the book.
 *
 * ticker: the hub follows each market that has ticker subscribers in a TickerBook (loaded from a snapshot
 * the first time a record of the market arrives, then advanced by every record), and sends its ticker
 * after each record, to subscriptions whose last ticker of that market differs.
 */

/** Where a subscription's messages go: the client connection (its session). */
export interface Outlet {
  send(text: string): void;
  /** The subscription cannot keep up (its pending records passed the bound): the connection is cut off. */
  overflow(reason: string): void;
}

interface MarketState {
  ticker: string;
  /** Feed position already reflected (orderbook_delta: the snapshot's, then each record's). */
  after: number;
  /** orderbook_delta only: records received before the snapshot was sent. */
  pending: PublishedRecord[] | null;
}

export class Subscription {
  #seq = 0;
  closed = false;
  /** ticker only: the last ticker sent per market (without its time), to skip unchanged ones. */
  readonly #lastTicker = new Map<string, string>();
  /** null: every market. */
  readonly markets: Map<string, MarketState> | null;

  constructor(
    readonly sid: number,
    readonly channel: Channel,
    markets: ReadonlyArray<{ id: string; ticker: string }> | null,
    /** Private channels: the subscriber's account. */
    readonly accountId: string | undefined,
    private readonly outlet: Outlet,
    private readonly maxPending: number,
  ) {
    this.markets = markets === null ? null : new Map(markets.map((m) => [m.id, { ticker: m.ticker, after: 0, pending: channel === 'orderbook_delta' ? [] : null }]));
  }

  get isPrivate(): boolean {
    return isPrivateChannel(this.channel);
  }

  get marketTickers(): string[] | undefined {
    return this.markets === null ? undefined : [...this.markets.values()].map((m) => m.ticker);
  }

  /** The feed lost records this subscription may have carried: skip a number so the client notices. */
  gap(): void {
    this.#seq += 1;
  }

  /** orderbook_delta: the market's snapshot, then what arrived while it was taken (after its position). */
  snapshot(marketId: string, msg: OrderbookSnapshotMsg, position: number): void {
    const state = this.markets?.get(marketId);
    if (this.closed || !state || state.pending === null) return;
    this.#emit('orderbook_snapshot', JSON.stringify(msg));
    const pending = state.pending;
    state.pending = null;
    state.after = position;
    for (const record of pending) this.deliver(record);
  }

  deliver(record: PublishedRecord): void {
    if (this.closed) return;
    const state = this.markets?.get(record.marketId);
    if (this.markets !== null && !state) return;
    switch (this.channel) {
      case 'orderbook_delta': {
        if (state!.pending !== null) {
          if (state!.pending.length >= this.maxPending) {
            this.outlet.overflow(`more than ${this.maxPending} updates of ${state!.ticker} arrived while its snapshot was taken`);
            return;
          }
          state!.pending.push(record);
          return;
        }
        if (record.seq <= state!.after) return;
        state!.after = record.seq;
        for (const json of record.deltas) this.#emit('orderbook_delta', json);
        return;
      }
      case 'trade':
        for (const json of record.trades) this.#emit('trade', json);
        return;
      case 'ticker':
        if (record.tickerMessage) this.ticker(record.marketId, record.tickerMessage);
        return;
      case 'fill':
        for (const fill of record.fills) if (fill.accountId === this.accountId) this.#emit('fill', fill.json);
        return;
      case 'user_orders':
        for (const order of record.orders) if (order.accountId === this.accountId) this.#emit('user_order', order.json);
        return;
    }
  }

  /** ticker: a market's ticker, sent unless it is the one sent last. */
  ticker(marketId: string, message: { key: string; json: string }): void {
    if (this.closed || this.#lastTicker.get(marketId) === message.key) return;
    this.#lastTicker.set(marketId, message.key);
    this.#emit('ticker', message.json);
  }

  #emit(type: string, msgJson: string): void {
    this.#seq += 1;
    this.outlet.send(frame(type, this.sid, this.#seq, msgJson));
  }
}

export interface HubOptions {
  /** A market's book, figures and feed position, from one database snapshot (for TickerBooks). */
  snapshot(marketId: string): Promise<BookSnapshot>;
  /** Records kept for a TickerBook while its snapshot loads (beyond: dropped and loaded again later). */
  maxPending: number;
  onError(error: unknown): void;
}

export class FeedHub {
  readonly #byMarket = new Map<string, Set<Subscription>>();
  /** Public subscriptions of every market. */
  readonly #everyMarket = new Set<Subscription>();
  readonly #byAccount = new Map<string, Set<Subscription>>();
  #count = 0;
  /** Ticker subscriptions per market, and of every market. */
  readonly #tickersOf = new Map<string, number>();
  #everyTicker = 0;
  readonly #books = new Map<string, TickerBook>();

  constructor(private readonly options: HubOptions) {}

  get size(): number {
    return this.#count;
  }

  add(sub: Subscription): void {
    this.#count += 1;
    if (sub.isPrivate) addTo(this.#byAccount, sub.accountId!, sub);
    else if (sub.markets === null) this.#everyMarket.add(sub);
    else for (const marketId of sub.markets.keys()) addTo(this.#byMarket, marketId, sub);
    if (sub.channel === 'ticker') {
      if (sub.markets === null) this.#everyTicker += 1;
      else for (const marketId of sub.markets.keys()) this.#tickersOf.set(marketId, (this.#tickersOf.get(marketId) ?? 0) + 1);
    }
  }

  remove(sub: Subscription): void {
    sub.closed = true;
    let removed = false;
    if (sub.isPrivate) removed = removeFrom(this.#byAccount, sub.accountId!, sub);
    else if (sub.markets === null) removed = this.#everyMarket.delete(sub);
    else for (const marketId of sub.markets.keys()) removed = removeFrom(this.#byMarket, marketId, sub) || removed;
    if (!removed) return;
    this.#count -= 1;
    if (sub.channel !== 'ticker') return;
    if (sub.markets === null) this.#everyTicker -= 1;
    else {
      for (const marketId of sub.markets.keys()) {
        const left = (this.#tickersOf.get(marketId) ?? 1) - 1;
        if (left > 0) this.#tickersOf.set(marketId, left);
        else this.#tickersOf.delete(marketId);
      }
    }
    // Books nobody follows any more are dropped.
    for (const marketId of [...this.#books.keys()]) if (!this.#followsTicker(marketId)) this.#books.delete(marketId);
  }

  /** Markets this process follows for tickers (tests, diagnostics). */
  get tickerBooks(): number {
    return this.#books.size;
  }

  #followsTicker(marketId: string): boolean {
    return this.#everyTicker > 0 || this.#tickersOf.has(marketId);
  }

  /** The market's ticker after this record (undefined while its book loads). */
  #tickerAfter(record: PublishedRecord): { key: string; json: string } | undefined {
    let book = this.#books.get(record.marketId);
    if (!book) {
      book = new TickerBook(record.marketId, record.record.ticker);
      this.#books.set(record.marketId, book);
      this.#loadBook(book);
    }
    if (book.pending !== null && book.pending.length >= this.options.maxPending) {
      // Loading takes too long: start again with a fresh snapshot.
      this.#books.delete(record.marketId);
      return undefined;
    }
    return book.apply(record) ? book.message() : undefined;
  }

  #loadBook(book: TickerBook): void {
    this.options.snapshot(book.marketId).then(
      (snapshot) => {
        if (this.#books.get(book.marketId) !== book) return;
        book.load(snapshot);
        const message = book.message();
        const send = (sub: Subscription) => {
          if (sub.channel === 'ticker') sub.ticker(book.marketId, message);
        };
        this.#byMarket.get(book.marketId)?.forEach(send);
        this.#everyMarket.forEach(send);
      },
      (error: unknown) => {
        if (this.#books.get(book.marketId) === book) this.#books.delete(book.marketId);
        this.options.onError(error);
      },
    );
  }

  /** Whether a record of this market with a fill or order change of these accounts ('*': any) may be wanted here. */
  wants(marketId: string, accounts: readonly string[] | '*'): boolean {
    if (this.#byMarket.has(marketId) || this.#everyMarket.size > 0) return true;
    if (this.#byAccount.size === 0) return false;
    return accounts === '*' || accounts.some((a) => this.#byAccount.has(a));
  }

  publish(record: PublishedRecord): void {
    if (this.#followsTicker(record.marketId)) record.tickerMessage = this.#tickerAfter(record);
    const market = this.#byMarket.get(record.marketId);
    if (market) for (const sub of market) sub.deliver(record);
    for (const sub of this.#everyMarket) sub.deliver(record);
    if (this.#byAccount.size > 0) {
      for (const accountId of record.accounts) {
        const subs = this.#byAccount.get(accountId);
        if (subs) for (const sub of subs) sub.deliver(record);
      }
    }
  }

  /** Records of this market were lost: every subscription that could have carried one skips a number. */
  gap(marketId: string): void {
    const seen = new Set<Subscription>();
    const mark = (sub: Subscription) => {
      if (!seen.has(sub)) {
        seen.add(sub);
        sub.gap();
      }
    };
    this.#byMarket.get(marketId)?.forEach(mark);
    this.#everyMarket.forEach(mark);
    for (const subs of this.#byAccount.values()) for (const sub of subs) if (sub.markets === null || sub.markets.has(marketId)) mark(sub);
  }
}

function addTo<K>(map: Map<K, Set<Subscription>>, key: K, sub: Subscription): void {
  let set = map.get(key);
  if (!set) {
    set = new Set();
    map.set(key, set);
  }
  set.add(sub);
}

function removeFrom<K>(map: Map<K, Set<Subscription>>, key: K, sub: Subscription): boolean {
  const set = map.get(key);
  if (!set || !set.delete(sub)) return false;
  if (set.size === 0) map.delete(key);
  return true;
}

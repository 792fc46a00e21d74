import type { BookRemovalRecord, ChangedOrderRecord } from '../../db/repositories/trading.js';
import type { BookSide } from '../../db/tables.js';
import { bookSideOf, yesPriceOf } from '../trading/book.js';
import type { Changeset } from '../trading/changes.js';
import { formatLots, formatTicks, lotsOf, TICKS_PER_DOT, ticksOf } from '../trading/money.js';
import type { BookChange, CommittedOrder, FeedEvents, FillEvent, MarketFigures, TradeEvent } from './types.js';

/**
 * What one trading transaction publishes, per market: built from the Changeset it persisted and
 * what writing it returned (trade and fill ids, the orders as updated, the quantity each cancel and
 * decrease took off the book, the markets' figures). Pure: no query of its own, so that the outbox costs
 * the trading transaction one small statement. The TradingTransaction hands the result to the outbox
 * repository inside the same transaction, so a record exists exactly when its changes committed.
 */

/** An order's row as a write returned it. */
export type ChangedOrder = ChangedOrderRecord;

/** A cancelled or decreased order as updated (where it rests included), and the contracts that left the book ("10"). */
export type BookRemoval = BookRemovalRecord;

/** The order a placement inserted (its row), and what of it now rests in the book. */
export interface PlacedOrder {
  row: ChangedOrder;
  /** Lots left resting (0 when it filled or its remainder was cancelled). */
  resting: bigint;
}

export interface PersistedChanges {
  changes: Changeset;
  /** Trade ids in the order of `changes.trades`. */
  tradeIds: readonly string[];
  /** Fill ids keyed by `${tradeId}:${role}`. */
  fillIds: ReadonlyMap<string, string>;
  /** Resting orders filled as makers, as updated. */
  filled: readonly ChangedOrder[];
  cancelled: readonly BookRemoval[];
  decreased: readonly BookRemoval[];
  /** New orders (placements), as inserted. */
  placed: readonly PlacedOrder[];
  /** Markets whose figures changed, as updated. */
  figures: ReadonlyMap<string, MarketFigures>;
}

export interface OutboxEntry {
  marketId: string;
  events: FeedEvents;
  /**
   * Accounts with a fill or an order change here, for the notification ('*': too many to list), so that a
   * process without a subscriber for any of them need not read the record.
   */
  accounts: string[] | '*';
}

/** Above this many accounts a record's notification says '*' (any account) instead of listing them. */
export const MAX_NOTIFIED_ACCOUNTS = 20;

export function committedOrder(row: ChangedOrder): CommittedOrder {
  return {
    id: row.id,
    account_id: row.account_id,
    market_id: String(row.market_id),
    side: row.side,
    action: row.action,
    price: row.price,
    count: row.count,
    remaining: row.remaining,
    filled: row.filled,
    cancelled: row.cancelled,
    status: row.status,
    time_in_force: row.time_in_force,
    post_only: row.post_only,
    reduce_only: row.reduce_only,
    client_order_id: row.client_order_id,
    builder_code: row.builder_code,
    expiration_ts: row.expiration_ts ? row.expiration_ts.toISOString() : null,
    sequence: String(row.sequence),
    cancel_reason: row.cancel_reason,
    created_at: row.created_at.toISOString(),
    updated_at: row.updated_at.toISOString(),
  };
}

class MarketEntry {
  readonly levels = new Map<string, bigint>();
  readonly trades: TradeEvent[] = [];
  readonly fills: FillEvent[] = [];
  /** By order id: the last write of an order in the transaction is its committed state. */
  readonly orders = new Map<string, ChangedOrder>();
  readonly accounts = new Set<string>();

  level(bookSide: BookSide, yesTicks: number, lots: bigint): void {
    const key = `${bookSide}:${yesTicks}`;
    this.levels.set(key, (this.levels.get(key) ?? 0n) + lots);
  }

  order(row: ChangedOrder): void {
    this.orders.set(row.id, row);
    this.accounts.add(row.account_id);
  }

  book(): BookChange[] {
    const out: BookChange[] = [];
    for (const [key, lots] of this.levels) {
      if (lots === 0n) continue;
      const [bookSide, ticks] = key.split(':') as [BookSide, string];
      const yes = Number(ticks);
      // A bid at p is a YES bid at p; an ask at p is a NO bid at 1 - p (the orderbook endpoint's frames).
      out.push(bookSide === 'bid' ? { side: 'yes', price: formatTicks(yes), delta: formatLots(lots) } : { side: 'no', price: formatTicks(TICKS_PER_DOT - yes), delta: formatLots(lots) });
    }
    return out;
  }
}

/** One entry per market the transaction touched (none when it changed nothing). */
export function outboxEntries(persisted: PersistedChanges): OutboxEntry[] {
  const { changes } = persisted;
  const markets = new Map<string, MarketEntry>();
  const market = (id: string): MarketEntry => {
    let entry = markets.get(String(id));
    if (!entry) {
      entry = new MarketEntry();
      markets.set(String(id), entry);
    }
    return entry;
  };

  changes.trades.forEach((trade, i) => {
    const entry = market(trade.marketId);
    const { fill } = trade;
    const tradeId = persisted.tradeIds[i]!;
    const count = formatLots(fill.lots);
    const yesPrice = formatTicks(fill.yesPrice);
    entry.trades.push({ trade_id: tradeId, yes_price: yesPrice, count, taker_side: trade.takerSide });
    for (const role of ['maker', 'taker'] as const) {
      const party = fill[role];
      entry.fills.push({
        fill_id: persisted.fillIds.get(`${tradeId}:${role}`) ?? '',
        trade_id: tradeId,
        order_id: party.orderId,
        account_id: party.accountId,
        side: party.side,
        action: party.action,
        price: formatTicks(party.price),
        yes_price: yesPrice,
        count,
        role,
      });
      entry.accounts.add(party.accountId);
    }
    // The maker's resting quantity leaves the book at the maker's level.
    entry.level(bookSideOf(fill.maker.side, fill.maker.action), yesPriceOf(fill.maker.side, fill.maker.price), -fill.lots);
  });

  // In the order persist writes them: fills, then cancels, then decreases.
  for (const row of persisted.filled) market(row.market_id).order(row);
  for (const removal of [...persisted.cancelled, ...persisted.decreased]) {
    const entry = market(removal.market_id);
    entry.level(removal.book_side, ticksOf(removal.yes_price), -lotsOf(removal.removed));
    entry.order(removal);
  }

  for (const { row, resting } of persisted.placed) {
    const entry = market(row.market_id);
    entry.order(row);
    if (resting > 0n) entry.level(bookSideOf(row.side, row.action), yesPriceOf(row.side, ticksOf(row.price)), resting);
  }

  // Figures that changed without any order (a settlement's payouts): the ticker still moves.
  for (const marketId of persisted.figures.keys()) market(marketId);

  return [...markets].map(([marketId, entry]) => ({
    marketId,
    events: {
      book: entry.book(),
      trades: entry.trades,
      fills: entry.fills,
      orders: [...entry.orders.values()].sort((a, b) => (BigInt(a.sequence) < BigInt(b.sequence) ? -1 : 1)).map(committedOrder),
      market: persisted.figures.get(marketId) ?? null,
    },
    accounts: entry.accounts.size > MAX_NOTIFIED_ACCOUNTS ? '*' : [...entry.accounts],
  }));
}

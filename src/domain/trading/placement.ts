import { randomUUID } from 'node:crypto';
import type { PlacementRead, PlacementReads, TradingMarketRecord } from '../../db/repositories/trading.js';
import type { NewOrder, OrderStatus } from '../../db/tables.js';
import { conflict, DomainError, invalid, notFound } from '../errors.js';
import { bookSideOf, OrderBook, yesPriceOf, type Order } from './book.js';
import { Changeset, liveOrderOf, type CancelReason, type LiveOrder } from './changes.js';
import type { Placement } from './input.js';
import { formatLots, formatMoney, formatTicks, lotsOf, microOf, notionalMicroDots } from './money.js';

/** A placement waiting to be made (commands/place.ts). */
export interface PlacementRequest {
  accountId: string;
  order: Placement;
  /** When it arrived. */
  now: Date;
}

/** What the start of the placements' transaction reads for this one (repo.beginPlacements). */
export function placementRead({ accountId, order }: PlacementRequest): PlacementRead {
  const takerSide = bookSideOf(order.side, order.action);
  return {
    ref: order.ticker,
    accountId,
    clientOrderId: order.clientOrderId,
    side: order.side,
    sell: order.action === 'sell',
    bookSide: takerSide === 'bid' ? 'ask' : 'bid',
    yesLimit: formatTicks(yesPriceOf(order.side, order.price)),
  };
}

/** The writes of one statement (repo.persistChanges): the orders placed, and everything else they change. */
export interface PlacementWrite {
  readonly changes: Changeset;
  /** The new orders as each was once made (insertedRows folds in what later placements of the write did to them). */
  readonly orders: NewOrder[];
  /** Lots each new order left resting once made, by order id. */
  readonly resting: Map<string, bigint>;
}

/** A placement made (`placed`: its order as it was once made, before later placements of the batch met it), or refused. */
export type PlacementOutcome = { orderId: string; market: TradingMarketRecord; placed: NewOrder } | { error: DomainError };

export interface PlacementPlan {
  /** In the order they must be written. */
  readonly writes: PlacementWrite[];
  /** One per placement, in placement order. */
  readonly outcomes: PlacementOutcome[];
}

/**
 * Placements committed together, in arrival order, against what their transaction read once at its start:
 * each is checked and matched exactly as if it had a transaction of its own after the ones before it (their
 * fills, reserves, resting orders and client_order_ids count), and one refused by a rule changes nothing
 * (every check comes before matching, and a match that is refused leaves the books untouched).
 *
 * Their writes go in as few statements as possible: usually one. A statement does not see its own writes, so
 * what later placements do to an order it inserts (fills, a self-trade cancel) is written into the inserted
 * row itself (insertedRows); a new statement starts only where a placement cancels a resting order that the
 * current one already fills.
 *
 * Live orders already expired are cancelled, never matched ("expired" at the latest arrival of the batch).
 */
export function planPlacements(items: readonly PlacementRequest[], reads: PlacementReads): PlacementPlan {
  const now = Math.max(...items.map((item) => item.now.getTime()));
  const byTicker = new Map(reads.markets.map((m) => [m.ticker, m]));
  const byId = new Map(reads.markets.map((m) => [String(m.id), m]));
  // A ticker, or else a numeric id (as the markets were locked).
  const marketOf = (ref: string) => byTicker.get(ref) ?? (/^\d{1,18}$/.test(ref) ? byId.get(String(BigInt(ref))) : undefined);

  // What the placements so far leave: each account's cash, each position's shares not reserved, the
  // client_order_ids used.
  const cash = new Map(reads.balances.map((b) => [b.user_id, microOf(b.cash)]));
  const sellable = new Map(reads.positions.map((p) => [positionKey(p.account_id, String(p.market_id), p.side), lotsOf(p.shares) - lotsOf(p.reserved)]));
  const taken = new Set(reads.taken.map(([account, clientOrderId]) => `${account}|${clientOrderId}`));

  let write: PlacementWrite = { changes: new Changeset(), orders: [], resting: new Map() };
  const writes = [write];
  const books = new Map<string, OrderBook>();
  const bookOf = (marketId: string) => {
    let book = books.get(marketId);
    if (!book) {
      book = new OrderBook();
      books.set(marketId, book);
    }
    return book;
  };
  for (const row of reads.crossing) {
    const live = liveOrderOf(row);
    if (row.expiration_ts && row.expiration_ts.getTime() <= now) write.changes.cancelResting(live, 'expired');
    else bookOf(live.marketId).add(engineOrderOf(live, row.sequence));
  }

  const outcomes = items.map((item, i): PlacementOutcome => {
    try {
      const { accountId, order } = item;
      const market = marketOf(order.ticker);
      if (!market) throw notFound(`no market '${order.ticker}'`);
      if (market.status !== 'ACTIVE') throw conflict(`market '${market.ticker}' is ${market.status}, not ACTIVE`);
      const marketId = String(market.id);
      const clientOrderKey = order.clientOrderId === undefined ? undefined : `${accountId}|${order.clientOrderId}`;
      if (clientOrderKey !== undefined && taken.has(clientOrderKey)) {
        throw conflict(`client_order_id '${order.clientOrderId}' is already used by another order of this account`);
      }
      if (order.action === 'sell') {
        const available = sellable.get(positionKey(accountId, marketId, order.side)) ?? 0n;
        if (available < order.lots) {
          throw invalid(`insufficient position: ${formatLots(available)} ${order.side.toUpperCase()} shares available to sell, order needs ${formatLots(order.lots)}`);
        }
      }
      const required = order.action === 'buy' ? notionalMicroDots(order.price, order.lots) : 0n;
      const available = cash.get(accountId) ?? 0n;
      if (available < required) throw invalid(`insufficient balance: ${formatMoney(available)} Dots available, order needs ${formatMoney(required)}`);

      const id = randomUUID();
      const sequence = reads.sequences[i]!;
      const taker: LiveOrder = { id, accountId, marketId, side: order.side, action: order.action, price: order.price, remaining: order.lots };
      const result = bookOf(marketId).match(engineOrderOf(taker, sequence), { timeInForce: order.timeInForce, postOnly: order.postOnly });
      if (result.rejected === 'post_only_would_cross') throw invalid('post_only order would cross the book: it would execute at once instead of resting');

      const changes = new Changeset();
      changes.reserve(taker, order.lots);
      for (const fill of result.fills) changes.applyFill(marketId, fill, order.price);
      for (const own of result.selfTradeCancelled) changes.cancelResting({ ...own, marketId }, 'self_trade');
      changes.release(taker, result.cancelledRemainder);
      if (result.restingRemainder > 0n) changes.rest({ ...taker, remaining: result.restingRemainder });

      // One statement cannot update a row twice: a resting order this write already fills and now cancels goes to the next.
      if (result.selfTradeCancelled.some((own) => !write.resting.has(own.id) && write.changes.makerFills.has(own.id))) {
        write = { changes: new Changeset(), orders: [], resting: new Map() };
        writes.push(write);
      }
      write.changes.absorb(changes);
      const placed = newOrderRow(id, accountId, marketId, order, sequence, result);
      write.orders.push(placed);
      write.resting.set(id, result.restingRemainder);

      for (const [account, delta] of changes.balances) cash.set(account, (cash.get(account) ?? 0n) + delta.cash);
      for (const p of changes.positions.values()) {
        const key = positionKey(p.accountId, p.marketId, p.side);
        sellable.set(key, (sellable.get(key) ?? 0n) + p.shares - p.reserved);
      }
      if (clientOrderKey !== undefined) taken.add(clientOrderKey);
      return { orderId: id, market, placed };
    } catch (error) {
      if (!(error instanceof DomainError)) throw error;
      return { error };
    }
  });
  return { writes: writes.filter((w) => w.orders.length > 0 || w.changes.cancels.length > 0), outcomes };
}

/** The orders a statement inserts, and what it does to the other orders, once folded together (insertedRows). */
export interface StatementOrders {
  /** New orders as the statement leaves them: fills and cancels of later placements included. */
  readonly inserted: NewOrder[];
  /** Fills of orders the statement does not insert, lots by order id. */
  readonly makerFills: ReadonlyMap<string, bigint>;
  /** Cancels of orders the statement does not insert. */
  readonly cancels: ReadonlyArray<{ id: string; reason: CancelReason }>;
  /** Lots each new order adds to the book as the feed counts it: as placed, less what a later cancel took off (fills leave as trades). */
  readonly booked: ReadonlyMap<string, bigint>;
}

/**
 * A write's new orders as one statement must insert them. Its rows are the orders as placed; placements after
 * them in the same write may fill them (as makers) or cancel them (self-trade prevention). A statement does
 * not see its own writes, so those changes cannot be updates of the inserted rows: they are applied to the
 * rows before insertion, and left out of the updates of existing orders.
 */
export function insertedRows(write: Pick<PlacementWrite, 'orders' | 'resting'>, changes: Pick<Changeset, 'makerFills' | 'cancels'>): StatementOrders {
  const cancelOf = new Map(changes.cancels.map((c) => [c.id, c.reason]));
  const booked = new Map(write.resting);
  const inserted = write.orders.map((row): NewOrder => {
    const fills = changes.makerFills.get(row.id) ?? 0n;
    const reason = cancelOf.get(row.id);
    if (fills === 0n && reason === undefined) return row;
    let remaining = lotsOf(row.remaining) - fills;
    let cancelled = lotsOf(row.cancelled);
    let status: OrderStatus = remaining > 0n ? 'PARTIAL' : 'FILLED';
    if (reason !== undefined) {
      booked.set(row.id, (booked.get(row.id) ?? 0n) - remaining);
      cancelled += remaining;
      remaining = 0n;
      status = 'CANCELLED';
    }
    return {
      ...row,
      remaining: formatLots(remaining),
      filled: formatLots(lotsOf(row.filled) + fills),
      cancelled: formatLots(cancelled),
      status,
      cancel_reason: reason ?? row.cancel_reason,
    };
  });
  const own = new Set(write.orders.map((row) => row.id));
  return {
    inserted,
    makerFills: new Map([...changes.makerFills].filter(([id]) => !own.has(id))),
    cancels: changes.cancels.filter((c) => !own.has(c.id)),
    booked,
  };
}

const positionKey = (accountId: string, marketId: string, side: string) => `${accountId}|${marketId}|${side}`;

function engineOrderOf(order: LiveOrder, sequence: string): Order {
  return { id: order.id, accountId: order.accountId, side: order.side, action: order.action, price: order.price, remaining: order.remaining, sequence: BigInt(sequence) };
}

function newOrderRow(
  id: string,
  accountId: string,
  marketId: string,
  order: Placement,
  sequence: string,
  result: ReturnType<OrderBook['match']>,
): NewOrder {
  const status: OrderStatus =
    result.restingRemainder > 0n ? (result.filled > 0n ? 'PARTIAL' : 'OPEN') : result.cancelledRemainder > 0n ? 'CANCELLED' : 'FILLED';
  const cancelReason =
    result.rejected === 'fok_not_fillable' ? 'fok_not_fillable' : result.cancelledRemainder > 0n ? `${order.timeInForce.toLowerCase()}_remainder` : null;
  return {
    id,
    account_id: accountId,
    market_id: marketId,
    side: order.side,
    action: order.action,
    price: formatTicks(order.price),
    count: formatLots(order.lots),
    remaining: formatLots(result.restingRemainder),
    filled: formatLots(result.filled),
    cancelled: formatLots(result.cancelledRemainder),
    status,
    time_in_force: order.timeInForce,
    post_only: order.postOnly,
    reduce_only: order.reduceOnly,
    client_order_id: order.clientOrderId ?? id,
    builder_code: order.builderCode,
    expiration_ts: order.expiration,
    sequence,
    cancel_reason: cancelReason,
    order_hash: order.signed?.orderHash ?? null,
    maker_address: order.signed?.makerAddress ?? null,
    salt: order.signed?.salt ?? null,
    nonce: order.signed?.nonce ?? null,
    signature: order.signed?.signature ?? null,
  };
}

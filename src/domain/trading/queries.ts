import type { Queryable } from '../../db/knex.js';
import * as repo from '../../db/repositories/trading.js';
import { clip, conflict, notFound } from '../errors.js';
import { decodeCursor, encodeCursor, splitPage } from '../pagination/cursor.js';
import { marketRefOf } from '../catalogue/names.js';
import { orderIdOf, pageLimit, parseStatuses, parseTerms } from './input.js';
import { formatLots, formatMicroDots, formatMoney, formatTicks, lotsOf, microOf, notionalMicroDots } from './money.js';
import type { CursorPage, ListOrdersInput, PreviewInput } from './types.js';
import {
  balanceView,
  fillView,
  orderbookView,
  orderView,
  positionView,
  settlementView,
  tradeView,
  type BalanceView,
  type FillView,
  type OrderbookView,
  type OrderView,
  type PositionView,
  type PreviewView,
  type SettlementView,
  type TradeView,
} from './views.js';
import type { FillRole } from '../../db/tables.js';

/**
 * What trading reads without changing anything: an account's orders and portfolio, a placement's preview,
 * and the public market data. Each read is one or a few statements outside any transaction.
 */

// --- orders

/** What an order would reserve, and whether the account has the cash or the shares for it (fee-free). */
export async function previewOrder(db: Queryable, accountId: string, input: PreviewInput): Promise<PreviewView> {
  const terms = parseTerms(input);
  const market = await repo.findMarket(db, terms.ticker);
  if (!market) throw notFound(`no market '${terms.ticker}'`);
  if (market.status !== 'ACTIVE') throw conflict(`market '${market.ticker}' is ${market.status}, not ACTIVE`);
  const balance = await repo.findBalance(db, accountId);
  const available = balance ? microOf(balance.cash) : 0n;
  const notional = notionalMicroDots(terms.price, terms.lots);
  const buy = terms.action === 'buy';
  let positionAvailable: bigint | undefined;
  if (!buy) {
    const position = await repo.findPosition(db, accountId, market.id, terms.side);
    positionAvailable = position ? lotsOf(position.shares) - lotsOf(position.reserved) : 0n;
  }
  const two = (micro: bigint) => formatMicroDots(micro, 2);
  const breakdown = (role: FillRole) => ({
    role,
    platform_fee_bps: 0 as const,
    builder_fee_bps: 0 as const,
    platform_fee: '0.00',
    builder_fee: '0.00',
    total_fee: '0.00',
    cash_required: buy ? two(notional) : '0.00',
    net_proceeds: buy ? '0.00' : two(notional),
  });
  return {
    market_id: String(market.id),
    ticker: market.ticker,
    side: terms.side === 'yes' ? 'YES' : 'NO',
    action: terms.action,
    price: formatTicks(terms.price),
    count: formatLots(terms.lots),
    notional: two(notional),
    reserve_required: buy ? two(notional) : '0.00',
    available_balance: formatMoney(available),
    sufficient_balance: buy ? available >= notional : true,
    position_available: positionAvailable === undefined ? null : formatLots(positionAvailable),
    sufficient_position: positionAvailable === undefined ? null : positionAvailable >= terms.lots,
    platform_taker_fee_bps: 0,
    platform_maker_fee_bps: 0,
    builder_code: terms.builderCode,
    builder_maker_fee_bps: 0,
    builder_taker_fee_bps: 0,
    maker: breakdown('maker'),
    taker: breakdown('taker'),
  };
}

/** The account's orders, newest first, optionally of one market (`market`: id or ticker, and/or `ticker`) and some statuses. */
export async function listOrders(db: Queryable, accountId: string, input: ListOrdersInput): Promise<{ cursor: string | null; orders: OrderView[] }> {
  const limit = pageLimit(input.limit);
  const statuses = parseStatuses(input.status);
  const after = input.cursor ? decodeCursor('orders', input.cursor, ['timestamp', 'uuid']) : undefined;
  const marketId = await marketFilter(db, [input.market, input.ticker]);
  if (marketId === null) return { cursor: null, orders: [] };
  const rows = await repo.listOrders(
    db,
    accountId,
    { marketId, statuses },
    after ? { createdAt: String(after[0]), id: String(after[1]) } : undefined,
    limit + 1,
  );
  const page = splitPage(rows, limit);
  const last = page.items.at(-1);
  return {
    cursor: page.hasMore && last ? encodeCursor('orders', [last.sort_created_at, last.id]) : null,
    orders: page.items.map(orderView),
  };
}

/** One of the account's orders (another account's is not found). */
export async function getOrder(db: Queryable, accountId: string, orderId: string): Promise<OrderView> {
  const id = orderIdOf(orderId);
  const row = id ? await repo.findOrder(db, accountId, id) : undefined;
  if (!row) throw notFound(`no order '${clip(orderId, 40)}'`);
  return orderView(row);
}

// --- portfolio

export async function getBalance(db: Queryable, accountId: string): Promise<BalanceView> {
  return balanceView(await repo.findBalance(db, accountId));
}

export async function listPositions(db: Queryable, accountId: string, input: CursorPage): Promise<{ cursor: string | null; positions: PositionView[] }> {
  const page = await idPage(db, 'positions', input, (marketId, afterId, limit) => repo.listPositions(db, accountId, marketId, afterId, limit));
  return { cursor: page.cursor, positions: page.items.map(positionView) };
}

export async function listFills(db: Queryable, accountId: string, input: CursorPage): Promise<{ cursor: string | null; fills: FillView[] }> {
  const page = await idPage(db, 'fills', input, (marketId, afterId, limit) => repo.listFills(db, accountId, marketId, afterId, limit));
  return { cursor: page.cursor, fills: page.items.map(fillView) };
}

export async function listSettlements(db: Queryable, accountId: string, input: CursorPage): Promise<{ cursor: string | null; settlements: SettlementView[] }> {
  const page = await idPage(db, 'settlements', input, (marketId, afterId, limit) => repo.listSettlements(db, accountId, marketId, afterId, limit));
  return { cursor: page.cursor, settlements: page.items.map(settlementView) };
}

// --- market data

export async function listTrades(db: Queryable, input: CursorPage): Promise<{ cursor: string | null; trades: TradeView[] }> {
  const page = await idPage(db, 'trades', input, (marketId, afterId, limit) => repo.listTrades(db, marketId, afterId, limit));
  return { cursor: page.cursor, trades: page.items.map(tradeView) };
}

/** The market's book (by ticker or id) at `now`: orders past their expiry no longer rest in it. */
export async function getOrderbook(db: Queryable, ticker: string, now: Date): Promise<OrderbookView> {
  const market = await repo.findMarket(db, marketRefOf(ticker));
  if (!market) throw notFound(`no market '${clip(marketRefOf(ticker), 40)}'`);
  return orderbookView(await repo.bookLevels(db, String(market.id), now));
}

// --- pages

/** A page of a collection keyed by a bigint id, newest first, optionally of one market (by ticker or id). */
async function idPage<T extends { id: string }>(
  db: Queryable,
  collection: string,
  input: CursorPage,
  fetch: (marketId: string | undefined, afterId: string | undefined, limit: number) => Promise<T[]>,
): Promise<{ cursor: string | null; items: T[] }> {
  const limit = pageLimit(input.limit);
  const after = input.cursor ? decodeCursor(collection, input.cursor, ['integer']) : undefined;
  const marketId = await marketFilter(db, [input.ticker]);
  if (marketId === null) return { cursor: null, items: [] };
  const rows = await fetch(marketId, after ? String(after[0]) : undefined, limit + 1);
  const page = splitPage(rows, limit);
  const last = page.items.at(-1);
  return { cursor: page.hasMore && last ? encodeCursor(collection, [Number(last.id)]) : null, items: page.items };
}

/** The one market the given references (tickers or ids; undefined: no filter) name; null when none or different ones. */
async function marketFilter(db: Queryable, refs: Array<string | undefined>): Promise<string | undefined | null> {
  let marketId: string | undefined;
  for (const ref of refs) {
    if (ref === undefined || ref === '') continue;
    const market = await repo.findMarket(db, marketRefOf(ref));
    if (!market || (marketId !== undefined && marketId !== String(market.id))) return null;
    marketId = String(market.id);
  }
  return marketId;
}

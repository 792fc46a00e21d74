import type { Queryable } from '../knex.js';
import type { MarketsRow } from '../tables.js';
import { LIVE, type Outcome, type OrdersRow } from '../tables.js';

/**
 * Reads of the order-book (CLOB) client's views: markets by their order-book identifiers, with what their
 * event says; an account's open orders and trades with those identifiers.
 */

/** A market with its order-book identifiers and what the client's shapes take from its event. */
export interface ClobMarketRecord extends MarketsRow {
  event_ticker: string;
  event_title: string;
  event_description: string;
  strike_date: Date;
  /** The event's mutually exclusive rule (the client's neg risk). */
  neg_risk: boolean;
}

const marketColumns = ['m.*', 'e.ticker as event_ticker', 'e.title as event_title', 'e.description as event_description', 'e.strike_date', 'e.mutually_exclusive as neg_risk'];

const markets = (db: Queryable) => db('markets as m').join('events as e', 'e.id', 'm.event_id');

/** The market of an outcome token id (either of its two: one unique index each). */
export async function findMarketByToken(db: Queryable, tokenId: string): Promise<ClobMarketRecord | undefined> {
  return markets(db)
    .whereRaw('(m.yes_token_id = ? or m.no_token_id = ?)', [tokenId, tokenId])
    .first(marketColumns);
}

/** The markets of these outcome token ids, each once. */
export async function findMarketsByTokens(db: Queryable, tokenIds: readonly string[]): Promise<ClobMarketRecord[]> {
  if (tokenIds.length === 0) return [];
  return markets(db)
    .whereRaw('(m.yes_token_id = any(?::text[]) or m.no_token_id = any(?::text[]))', [[...tokenIds], [...tokenIds]])
    .select(marketColumns);
}

export async function findMarketByCondition(db: Queryable, conditionId: string): Promise<ClobMarketRecord | undefined> {
  return markets(db).where('m.condition_id', conditionId).first(marketColumns);
}

export async function findMarketsByIds(db: Queryable, ids: readonly string[]): Promise<ClobMarketRecord[]> {
  if (ids.length === 0) return [];
  return markets(db).whereRaw('m.id = any(?::bigint[])', [[...ids]]).select(marketColumns);
}

/** Markets in id order, after `afterId`. */
export async function listMarketsAfter(db: Queryable, afterId: string, limit: number): Promise<ClobMarketRecord[]> {
  return markets(db).where('m.id', '>', afterId).orderBy('m.id').limit(limit).select(marketColumns);
}

/** The market's latest trade: its YES-frame price and the side its taker bought or sold. */
export async function lastTrade(db: Queryable, marketId: string): Promise<{ yes_price: string; taker_side: Outcome; taker_action: 'buy' | 'sell' } | undefined> {
  return db('trades as t')
    .join('orders as o', 'o.id', 't.taker_order_id')
    .where('t.market_id', marketId)
    .orderBy('t.id', 'desc')
    .first('t.yes_price', 't.taker_side', 'o.action as taker_action');
}

/** The account's live orders, newest first (by time priority), before sequence `beforeSequence`, optionally of one market (and outcome) or one order. */
export async function listOpenOrders(
  db: Queryable,
  accountId: string,
  filter: { marketId?: string; side?: Outcome; orderId?: string },
  beforeSequence: string | undefined,
  limit: number,
): Promise<OrdersRow[]> {
  const q = db('orders as o').where('o.account_id', accountId).whereRaw(`o.${LIVE}`);
  if (filter.marketId !== undefined) q.where('o.market_id', filter.marketId);
  if (filter.side !== undefined) q.where('o.side', filter.side);
  if (filter.orderId !== undefined) q.where('o.id', filter.orderId);
  if (beforeSequence !== undefined) q.where('o.sequence', '<', beforeSequence);
  return q.orderBy('o.sequence', 'desc').limit(limit).select('o.*');
}

/** One of the account's orders, whatever its status. */
export async function findOrderOfAccount(db: Queryable, accountId: string, orderId: string): Promise<OrdersRow | undefined> {
  return db<OrdersRow>('orders').where({ id: orderId, account_id: accountId }).first();
}

/** One of the account's fills with its trade and both orders of it. */
export interface AccountTradeRecord {
  fill_id: string;
  role: 'maker' | 'taker';
  trade_id: string;
  market_id: string;
  yes_price: string;
  count: string;
  created_at: Date;
  taker_order_id: string;
  taker_side: Outcome;
  taker_action: 'buy' | 'sell';
  taker_account_id: string;
  taker_address: string | null;
  maker_order_id: string;
  maker_side: Outcome;
  maker_action: 'buy' | 'sell';
  maker_account_id: string;
  maker_address: string | null;
}

/** The account's fills, newest first, with their trades, before fill `beforeFillId`; filters by trade, market, side and time. */
export async function listAccountTrades(
  db: Queryable,
  accountId: string,
  filter: { tradeId?: string; marketId?: string; side?: Outcome; before?: Date; after?: Date },
  beforeFillId: string | undefined,
  limit: number,
): Promise<AccountTradeRecord[]> {
  const q = db('fills as f')
    .join('trades as t', 't.id', 'f.trade_id')
    .join('orders as tk', 'tk.id', 't.taker_order_id')
    .join('orders as mk', 'mk.id', 't.maker_order_id')
    .where('f.account_id', accountId);
  if (filter.tradeId !== undefined) q.where('t.id', filter.tradeId);
  if (filter.marketId !== undefined) q.where('f.market_id', filter.marketId);
  if (filter.side !== undefined) q.where('f.side', filter.side);
  if (filter.before !== undefined) q.where('f.created_at', '<', filter.before);
  if (filter.after !== undefined) q.where('f.created_at', '>', filter.after);
  if (beforeFillId !== undefined) q.where('f.id', '<', beforeFillId);
  return q
    .orderBy('f.id', 'desc')
    .limit(limit)
    .select(
      'f.id as fill_id', 'f.role', 't.id as trade_id', 't.market_id', 't.yes_price', 't.count', 't.created_at',
      'tk.id as taker_order_id', 'tk.side as taker_side', 'tk.action as taker_action', 'tk.account_id as taker_account_id', 'tk.maker_address as taker_address',
      'mk.id as maker_order_id', 'mk.side as maker_side', 'mk.action as maker_action', 'mk.account_id as maker_account_id', 'mk.maker_address as maker_address',
    );
}

/** Whether a signed order with this hash was placed. */
export async function orderHashUsed(db: Queryable, orderHash: string): Promise<boolean> {
  return (await db('orders').where('order_hash', orderHash).first('id')) !== undefined;
}

import type { Db, Queryable } from '../knex.js';
import {
  LIVE,
  type BalancesRow,
  type FillsRow,
  type NewSettlement,
  type Outcome,
  type OrdersRow,
  type PositionsRow,
  type SettlementsRow,
  type SignedOrderColumn,
  type TradesRow,
} from '../tables.js';
import type { TradingMarketRecord } from './trading-statements.js';

/**
 * Queries of trading: orders, fills, trades, positions, balances, settlements and the ledger.
 * Decimal columns travel as strings both ways (never JavaScript numbers); the service converts them
 * to exact units (money.ts). The row types are in tables.ts. A trading transaction's writes run as one
 * statement (persistChanges) taking named records as JSON.
 */

const utc = (column: string) => `to_char(${column} at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"')`;

/**
 * An order as read back: its row (but for the columns generated from side, action and price, which views
 * derive themselves), its market's ticker and the sort key of its cursors.
 */
export interface OrderRecord extends Omit<OrdersRow, 'book_side' | 'yes_price'> {
  ticker: string;
  /** created_at with microseconds, for cursors. */
  sort_created_at: string;
}

/** An order's row as a write returned it, but for the columns generated from side, action and price. */
export type ChangedOrderRecord = Omit<OrdersRow, 'book_side' | 'yes_price' | SignedOrderColumn>;

export type PositionRecord = PositionsRow & { ticker: string };
export type FillRecord = FillsRow & { ticker: string };
export type TradeRecord = TradesRow & { ticker: string };
export type SettlementRecord = SettlementsRow & { ticker: string };

/** The resting contracts at one price of one side of a market's book (YES frame). */
export type BookLevelRecord = Pick<OrdersRow, 'book_side' | 'yes_price'> & { count: string };

// --- markets

const MARKET_COLUMNS = ['id', 'ticker', 'event_id', 'status'] as const;

/** The market named by `ref` (a ticker, or else a numeric id), without locking it. */
export async function findMarket(db: Queryable, ref: string): Promise<TradingMarketRecord | undefined> {
  const byTicker = await db<TradingMarketRecord>('markets').where({ ticker: ref }).first(...MARKET_COLUMNS);
  if (byTicker || !/^\d{1,18}$/.test(ref)) return byTicker;
  return db<TradingMarketRecord>('markets').where({ id: ref }).first(...MARKET_COLUMNS);
}

/**
 * Locks these markets in id order (so that transactions locking several never deadlock) until the transaction
 * ends: FOR NO KEY UPDATE, which conflicts with any other matching, cancelling, closing or resolving of the
 * market, but not with rows merely referring to it. This lock serialises everything that changes a market's
 * book, in every process.
 */
export async function lockMarketsById(db: Queryable, ids: readonly string[]): Promise<TradingMarketRecord[]> {
  if (ids.length === 0) return [];
  return db<TradingMarketRecord>('markets')
    .whereRaw('id = any(?::bigint[])', [[...ids]])
    .orderBy('id')
    .forNoKeyUpdate()
    .select(...MARKET_COLUMNS);
}

/**
 * The events' rollups recomputed from their markets (the events of these markets, each once). Run after the
 * trading transactions commit, never inside one: the catalogue locks an event before its markets, trading
 * locks only markets, so taking the event's row inside a trading transaction could deadlock with a
 * resolution. Its own transaction locks the events in id order first (several processes may refresh the
 * same events at once), then updates those whose figures changed.
 */
export async function refreshEventRollups(db: Db, marketIds: readonly string[]): Promise<void> {
  if (marketIds.length === 0) return;
  await db.transaction(async (tx) => {
    const locked = await tx.raw<{ rows: Array<{ id: string }> }>(
      `select e.id from events e
        where e.id in (select event_id from markets where id = any(?::bigint[]))
        order by e.id
        for no key update`,
      [[...marketIds]],
    );
    if (locked.rows.length === 0) return;
    await tx.raw(
      `update events e set volume = s.volume, liquidity = s.liquidity, open_interest = s.open_interest
         from (
           select m.event_id, sum(m.volume) as volume, sum(m.liquidity) as liquidity, sum(m.open_interest) as open_interest
             from markets m
            where m.event_id = any(?::bigint[])
            group by m.event_id
         ) s
        where e.id = s.event_id
          and (e.volume, e.liquidity, e.open_interest) is distinct from (s.volume, s.liquidity, s.open_interest)`,
      [locked.rows.map((r) => String(r.id))],
    );
  });
}

// --- orders

function orderColumns(db: Queryable) {
  return ['o.*', 'm.ticker', db.raw(`${utc('o.created_at')} as sort_created_at`)];
}

export async function findOrder(db: Queryable, accountId: string, orderId: string): Promise<OrderRecord | undefined> {
  return db('orders as o')
    .join('markets as m', 'm.id', 'o.market_id')
    .where({ 'o.id': orderId, 'o.account_id': accountId })
    .first(orderColumns(db));
}

export async function findOrdersOfAccount(db: Queryable, accountId: string, orderIds: readonly string[]): Promise<OrderRecord[]> {
  if (orderIds.length === 0) return [];
  return db('orders as o')
    .join('markets as m', 'm.id', 'o.market_id')
    .where('o.account_id', accountId)
    .whereRaw('o.id = any(?::uuid[])', [[...orderIds]])
    .select(orderColumns(db));
}

/** The markets of these orders of the account that are live, each once. */
export async function findMarketsOfLiveOrders(db: Queryable, accountId: string, orderIds: readonly string[]): Promise<string[]> {
  if (orderIds.length === 0) return [];
  const rows: Array<{ market_id: string }> = await db('orders')
    .where('account_id', accountId)
    .whereRaw('id = any(?::uuid[])', [[...orderIds]])
    .whereRaw(LIVE)
    .distinct('market_id');
  return rows.map((r) => String(r.market_id));
}

/** The account's live orders, of one market or of all. */
export async function findLiveOrdersOfAccount(db: Queryable, accountId: string, marketId?: string): Promise<OrderRecord[]> {
  const q = db('orders as o').join('markets as m', 'm.id', 'o.market_id').where('o.account_id', accountId).whereRaw(`o.${LIVE}`);
  if (marketId !== undefined) q.where('o.market_id', marketId);
  return q.orderBy('o.sequence').select(orderColumns(db));
}

/** Every live order of a market, in time priority. */
export async function findLiveOrdersOfMarket(db: Queryable, marketId: string): Promise<OrderRecord[]> {
  return db('orders as o')
    .join('markets as m', 'm.id', 'o.market_id')
    .where('o.market_id', marketId)
    .whereRaw(`o.${LIVE}`)
    .orderBy('o.sequence')
    .select(orderColumns(db));
}

/** Markets holding live orders whose expiry is at or before `now`, oldest expiry first. */
export async function findMarketsWithExpiredOrders(db: Queryable, now: Date, limit: number): Promise<string[]> {
  const rows = await db('orders')
    .whereRaw(LIVE)
    .whereNotNull('expiration_ts')
    .where('expiration_ts', '<=', now)
    .groupBy('market_id')
    .orderByRaw('min(expiration_ts)')
    .limit(limit)
    .select('market_id');
  return rows.map((r: { market_id: string }) => r.market_id);
}

export async function findExpiredOrdersOfMarket(db: Queryable, marketId: string, now: Date): Promise<OrderRecord[]> {
  return db('orders as o')
    .join('markets as m', 'm.id', 'o.market_id')
    .where('o.market_id', marketId)
    .whereRaw(`o.${LIVE}`)
    .whereNotNull('o.expiration_ts')
    .where('o.expiration_ts', '<=', now)
    .orderBy('o.sequence')
    .select(orderColumns(db));
}

export interface OrderListFilter {
  marketId?: string;
  statuses?: readonly string[];
}

/** An account's orders, newest first (created_at desc, id desc), strictly after `after`. */
export async function listOrders(
  db: Queryable,
  accountId: string,
  filter: OrderListFilter,
  after: { createdAt: string; id: string } | undefined,
  limit: number,
): Promise<OrderRecord[]> {
  const q = db('orders as o').join('markets as m', 'm.id', 'o.market_id').where('o.account_id', accountId);
  if (filter.marketId !== undefined) q.where('o.market_id', filter.marketId);
  if (filter.statuses && filter.statuses.length > 0) q.whereIn('o.status', filter.statuses as string[]);
  if (after) q.whereRaw('(o.created_at, o.id) < (?::timestamptz, ?::uuid)', [after.createdAt, after.id]);
  return q
    .orderBy([
      { column: 'o.created_at', order: 'desc' },
      { column: 'o.id', order: 'desc' },
    ])
    .limit(limit)
    .select(orderColumns(db));
}

/** Resting quantity per YES-frame price on each side of the book, skipping orders already expired at `now`. */
export async function bookLevels(db: Queryable, marketId: string, now: Date): Promise<BookLevelRecord[]> {
  return db('orders')
    .where({ market_id: marketId })
    .whereRaw(LIVE)
    .where((w) => { w.whereNull('expiration_ts').orWhere('expiration_ts', '>', now); })
    .groupBy('book_side', 'yes_price')
    .select('book_side', 'yes_price', db.raw('sum(remaining)::text as count'));
}

// --- balances and the ledger

/** Locks the balances of these accounts in account order (the one order every transaction uses). */
export async function lockBalances(db: Queryable, accountIds: readonly string[]): Promise<BalancesRow[]> {
  if (accountIds.length === 0) return [];
  return db<BalancesRow>('balances')
    .whereRaw('user_id = any(?::uuid[])', [[...accountIds]])
    .orderBy('user_id')
    .forNoKeyUpdate()
    .select('user_id', 'cash', 'reserved')
    .options({ name: 'dots_lock_balances' });
}

export async function findBalance(db: Queryable, accountId: string): Promise<BalancesRow | undefined> {
  return db<BalancesRow>('balances').where({ user_id: accountId }).first('user_id', 'cash', 'reserved');
}

// --- positions

export async function findPosition(db: Queryable, accountId: string, marketId: string, side: Outcome): Promise<{ shares: string; reserved: string } | undefined> {
  return db('positions').where({ account_id: accountId, market_id: marketId, side }).first('shares', 'reserved');
}

/** Positions of a market holding shares. */
export async function findHoldingsOfMarket(db: Queryable, marketId: string): Promise<Array<{ account_id: string; side: Outcome; shares: string }>> {
  return db('positions').where({ market_id: marketId }).where('shares', '>', 0).orderBy(['account_id', 'side']).select('account_id', 'side', 'shares');
}

/** An account's positions holding shares, most recently opened first (by id), strictly after `afterId`. */
export async function listPositions(db: Queryable, accountId: string, marketId: string | undefined, afterId: string | undefined, limit: number): Promise<PositionRecord[]> {
  const q = db('positions as p').join('markets as m', 'm.id', 'p.market_id').where('p.account_id', accountId).where('p.shares', '>', 0);
  if (marketId !== undefined) q.where('p.market_id', marketId);
  if (afterId !== undefined) q.where('p.id', '<', afterId);
  return q.orderBy('p.id', 'desc').limit(limit).select('p.*', 'm.ticker');
}

// --- trades and fills

export async function listFills(db: Queryable, accountId: string, marketId: string | undefined, afterId: string | undefined, limit: number): Promise<FillRecord[]> {
  const q = db('fills as f').join('markets as m', 'm.id', 'f.market_id').where('f.account_id', accountId);
  if (marketId !== undefined) q.where('f.market_id', marketId);
  if (afterId !== undefined) q.where('f.id', '<', afterId);
  return q.orderBy('f.id', 'desc').limit(limit).select('f.*', 'm.ticker');
}

export async function listTrades(db: Queryable, marketId: string | undefined, afterId: string | undefined, limit: number): Promise<TradeRecord[]> {
  const q = db('trades as t').join('markets as m', 'm.id', 't.market_id');
  if (marketId !== undefined) q.where('t.market_id', marketId);
  if (afterId !== undefined) q.where('t.id', '<', afterId);
  return q.orderBy('t.id', 'desc').limit(limit).select('t.*', 'm.ticker');
}

// --- settlements

/** Inserts the settlements; returns each one's id keyed by account id. */
export async function insertSettlements(db: Queryable, settlements: readonly NewSettlement[]): Promise<Map<string, string>> {
  const ids = new Map<string, string>();
  for (let i = 0; i < settlements.length; i += 1000) {
    const rows: Array<{ id: string; account_id: string }> = await db('settlements').insert(settlements.slice(i, i + 1000)).returning(['id', 'account_id']);
    for (const r of rows) ids.set(r.account_id, String(r.id));
  }
  return ids;
}

export async function listSettlements(db: Queryable, accountId: string, marketId: string | undefined, afterId: string | undefined, limit: number): Promise<SettlementRecord[]> {
  const q = db('settlements as s').join('markets as m', 'm.id', 's.market_id').where('s.account_id', accountId);
  if (marketId !== undefined) q.where('s.market_id', marketId);
  if (afterId !== undefined) q.where('s.id', '<', afterId);
  return q.orderBy('s.id', 'desc').limit(limit).select('s.*', 'm.ticker');
}

// The statements of placement batches and of every trading transaction's writes.
export {
  beginPlacements,
  persistChanges,
  PERSIST_CHANGES,
  useTradingPlans,
  type BookRemovalRecord,
  type MarketFiguresRecord,
  type PlacementRead,
  type PlacementReads,
  type TradingMarketRecord,
} from './trading-statements.js';

import type { Queryable } from '../knex.js';

/**
 * Queries of trading: orders, fills, trades, positions, balances, settlements and the ledger.
 * Decimal columns travel as strings both ways (never JavaScript numbers); the service converts them
 * to exact units (money.ts). Writes that change several rows take arrays and run as one statement.
 */

const LIVE = `status in ('OPEN', 'PARTIAL')`;
const utc = (column: string) => `to_char(${column} at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"')`;

export type OrderSide = 'yes' | 'no';
export type OrderActionColumn = 'buy' | 'sell';
export type OrderStatusColumn = 'OPEN' | 'PARTIAL' | 'FILLED' | 'CANCELLED';

export interface TradingMarketRow {
  id: string;
  ticker: string;
  event_id: string;
  status: 'ACTIVE' | 'CLOSED' | 'RESOLVED';
}

export interface OrderRow {
  id: string;
  account_id: string;
  market_id: string;
  ticker: string;
  side: OrderSide;
  action: OrderActionColumn;
  price: string;
  count: string;
  remaining: string;
  filled: string;
  cancelled: string;
  status: OrderStatusColumn;
  time_in_force: 'GTC' | 'IOC' | 'FOK';
  post_only: boolean;
  reduce_only: boolean;
  client_order_id: string;
  builder_code: string;
  expiration_ts: Date | null;
  sequence: string;
  cancel_reason: string | null;
  created_at: Date;
  updated_at: Date;
  /** created_at with microseconds, for cursors. */
  sort_created_at: string;
}

export interface NewOrderRow {
  id: string;
  account_id: string;
  market_id: string;
  side: OrderSide;
  action: OrderActionColumn;
  price: string;
  count: string;
  remaining: string;
  filled: string;
  cancelled: string;
  status: OrderStatusColumn;
  time_in_force: 'GTC' | 'IOC' | 'FOK';
  post_only: boolean;
  reduce_only: boolean;
  client_order_id: string;
  builder_code: string;
  expiration_ts: Date | null;
  sequence: string;
  cancel_reason: string | null;
}

export interface BalanceRow {
  user_id: string;
  cash: string;
  reserved: string;
}

export interface PositionRow {
  id: string;
  account_id: string;
  market_id: string;
  ticker: string;
  side: OrderSide;
  shares: string;
  reserved: string;
  updated_at: Date;
}

export interface FillRow {
  id: string;
  order_id: string;
  market_id: string;
  ticker: string;
  side: OrderSide;
  action: OrderActionColumn;
  price: string;
  count: string;
  role: 'maker' | 'taker';
  created_at: Date;
}

export interface TradeRow {
  id: string;
  market_id: string;
  ticker: string;
  yes_price: string;
  count: string;
  taker_side: OrderSide;
  created_at: Date;
}

export interface SettlementRow {
  id: string;
  market_id: string;
  ticker: string;
  result: 'yes' | 'no' | 'invalid';
  yes_count: string;
  no_count: string;
  payout: string;
  created_at: Date;
}

// --- markets

const MARKET_COLUMNS = ['id', 'ticker', 'event_id', 'status'] as const;

/** The market named by `ref` (a ticker, or else a numeric id), without locking it. */
export async function findMarket(db: Queryable, ref: string): Promise<TradingMarketRow | undefined> {
  const byTicker = await db<TradingMarketRow>('markets').where({ ticker: ref }).first(...MARKET_COLUMNS);
  if (byTicker || !/^\d{1,18}$/.test(ref)) return byTicker;
  return db<TradingMarketRow>('markets').where({ id: ref }).first(...MARKET_COLUMNS);
}

/**
 * The market named by `ref`, locked until the transaction ends (FOR NO KEY UPDATE: conflicts with any
 * other matching, cancelling, closing or resolving of the market, but not with rows merely referring
 * to it). This lock serialises everything that changes a market's book, in every process.
 */
export async function lockMarket(db: Queryable, ref: string): Promise<TradingMarketRow | undefined> {
  const byTicker = await db<TradingMarketRow>('markets').where({ ticker: ref }).forNoKeyUpdate().first(...MARKET_COLUMNS);
  if (byTicker || !/^\d{1,18}$/.test(ref)) return byTicker;
  return db<TradingMarketRow>('markets').where({ id: ref }).forNoKeyUpdate().first(...MARKET_COLUMNS);
}

/** Locks these markets in id order (so that transactions locking several never deadlock). */
export async function lockMarketsById(db: Queryable, ids: readonly string[]): Promise<TradingMarketRow[]> {
  if (ids.length === 0) return [];
  return db<TradingMarketRow>('markets')
    .whereRaw('id = any(?::bigint[])', [[...ids]])
    .orderBy('id')
    .forNoKeyUpdate()
    .select(...MARKET_COLUMNS);
}

/** A market's traded figures after a change (decimal strings), for the real-time feed's ticker. */
export interface MarketFiguresRow {
  volume: string;
  open_interest: string;
  last_yes_price: string | null;
}

/** Adds these changes to the market's figures; returns the figures after them. */
export async function updateMarketStats(
  db: Queryable,
  marketId: string,
  change: { volume: string; liquidity: string; openInterest: string; lastYesPrice?: string; lastNoPrice?: string },
): Promise<MarketFiguresRow> {
  const set: Record<string, unknown> = {
    volume: db.raw('volume + ?::numeric', [change.volume]),
    liquidity: db.raw('liquidity + ?::numeric', [change.liquidity]),
    open_interest: db.raw('open_interest + ?::numeric', [change.openInterest]),
  };
  if (change.lastYesPrice !== undefined) {
    set.last_yes_price = change.lastYesPrice;
    set.last_no_price = change.lastNoPrice;
  }
  const [row] = await db('markets')
    .where({ id: marketId })
    .update(set)
    .returning(['volume', 'open_interest', 'last_yes_price']);
  return row as MarketFiguresRow;
}

/**
 * The event's rollups recomputed from its markets. Run after the trading transaction commits, never
 * inside it: the catalogue locks an event before its markets, trading locks only markets, so taking the
 * event's row inside a trading transaction could deadlock with a resolution.
 */
export async function refreshEventRollups(db: Queryable, marketIds: readonly string[]): Promise<void> {
  if (marketIds.length === 0) return;
  await db.raw(
    `update events e set volume = s.volume, liquidity = s.liquidity, open_interest = s.open_interest
       from (
         select m.event_id, sum(m.volume) as volume, sum(m.liquidity) as liquidity, sum(m.open_interest) as open_interest
           from markets m
          where m.event_id in (select event_id from markets where id = any(?::bigint[]))
          group by m.event_id
       ) s
      where e.id = s.event_id
        and (e.volume, e.liquidity, e.open_interest) is distinct from (s.volume, s.liquidity, s.open_interest)`,
    [[...marketIds]],
  );
}

// --- orders

function orderColumns(db: Queryable) {
  return ['o.*', 'm.ticker', db.raw(`${utc('o.created_at')} as sort_created_at`)];
}

export async function nextOrderSequence(db: Queryable): Promise<string> {
  const result = await db.raw<{ rows: Array<{ sequence: string }> }>(`select nextval('order_sequence') as sequence`);
  return result.rows[0]!.sequence;
}

export async function clientOrderIdTaken(db: Queryable, accountId: string, clientOrderId: string): Promise<boolean> {
  const row = await db('orders').where({ account_id: accountId, client_order_id: clientOrderId }).first('id');
  return row !== undefined;
}

/** Inserts an order; returns its row as stored (defaults and generated columns included), without the market's ticker. */
export async function insertOrder(db: Queryable, order: NewOrderRow): Promise<Omit<OrderRow, 'ticker' | 'sort_created_at'>> {
  const [row] = await db('orders').insert(order).returning('*');
  return row;
}

export async function findOrder(db: Queryable, accountId: string, orderId: string): Promise<OrderRow | undefined> {
  return db('orders as o')
    .join('markets as m', 'm.id', 'o.market_id')
    .where({ 'o.id': orderId, 'o.account_id': accountId })
    .first(orderColumns(db));
}

export async function findOrdersOfAccount(db: Queryable, accountId: string, orderIds: readonly string[]): Promise<OrderRow[]> {
  if (orderIds.length === 0) return [];
  return db('orders as o')
    .join('markets as m', 'm.id', 'o.market_id')
    .where('o.account_id', accountId)
    .whereRaw('o.id = any(?::uuid[])', [[...orderIds]])
    .select(orderColumns(db));
}

/** The account's live orders, of one market or of all. */
export async function findLiveOrdersOfAccount(db: Queryable, accountId: string, marketId?: string): Promise<OrderRow[]> {
  const q = db('orders as o').join('markets as m', 'm.id', 'o.market_id').where('o.account_id', accountId).whereRaw(`o.${LIVE}`);
  if (marketId !== undefined) q.where('o.market_id', marketId);
  return q.orderBy('o.sequence').select(orderColumns(db));
}

/** Every live order of a market, in time priority. */
export async function findLiveOrdersOfMarket(db: Queryable, marketId: string): Promise<OrderRow[]> {
  return db('orders as o')
    .join('markets as m', 'm.id', 'o.market_id')
    .where('o.market_id', marketId)
    .whereRaw(`o.${LIVE}`)
    .orderBy('o.sequence')
    .select(orderColumns(db));
}

/**
 * Live orders of `bookSide` in a market that an incoming order with YES-frame limit `yesLimit` would
 * meet: asks at or below it, bids at or above it, in price then time priority.
 */
export async function findCrossingOrders(db: Queryable, marketId: string, bookSide: 'bid' | 'ask', yesLimit: string): Promise<OrderRow[]> {
  const q = db('orders as o')
    .join('markets as m', 'm.id', 'o.market_id')
    .where({ 'o.market_id': marketId, 'o.book_side': bookSide })
    .whereRaw(`o.${LIVE}`);
  if (bookSide === 'ask') q.where('o.yes_price', '<=', yesLimit).orderBy([{ column: 'o.yes_price', order: 'asc' }]);
  else q.where('o.yes_price', '>=', yesLimit).orderBy([{ column: 'o.yes_price', order: 'desc' }]);
  return q.orderBy('o.sequence').select(orderColumns(db));
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

export async function findExpiredOrdersOfMarket(db: Queryable, marketId: string, now: Date): Promise<OrderRow[]> {
  return db('orders as o')
    .join('markets as m', 'm.id', 'o.market_id')
    .where('o.market_id', marketId)
    .whereRaw(`o.${LIVE}`)
    .whereNotNull('o.expiration_ts')
    .where('o.expiration_ts', '<=', now)
    .orderBy('o.sequence')
    .select(orderColumns(db));
}

/** An order's row as a write left it (RETURNING), without the market's ticker. */
export type ChangedOrderRow = Omit<OrderRow, 'ticker' | 'sort_created_at'>;

/**
 * Maker fills: `lots` (a decimal count) leaves `remaining` for `filled`; FILLED at zero, else PARTIAL.
 * Returns the rows as updated.
 */
export async function fillOrders(db: Queryable, fills: ReadonlyArray<{ id: string; count: string }>): Promise<ChangedOrderRow[]> {
  if (fills.length === 0) return [];
  const result = await db.raw<{ rows: ChangedOrderRow[] }>(
    `update orders o set
       remaining = o.remaining - v.count,
       filled = o.filled + v.count,
       status = case when o.remaining - v.count = 0 then 'FILLED' else 'PARTIAL' end,
       updated_at = now()
     from unnest(?::uuid[], ?::numeric[]) as v (id, count)
     where o.id = v.id
     returning o.*`,
    [fills.map((f) => f.id), fills.map((f) => f.count)],
  );
  return result.rows;
}

/** A cancelled or decreased order's row as updated, and the quantity that left the book (for the real-time feed). */
export interface BookRemovalRow extends ChangedOrderRow {
  book_side: 'bid' | 'ask';
  yes_price: string;
  removed: string;
}

/**
 * Cancels what remains of each order (moved to `cancelled`), with a reason. Returns, per order cancelled,
 * the quantity that left the book (`old`: the row as the statement found it).
 */
export async function cancelOrders(db: Queryable, cancels: ReadonlyArray<{ id: string; reason: string }>): Promise<BookRemovalRow[]> {
  if (cancels.length === 0) return [];
  const result = await db.raw<{ rows: BookRemovalRow[] }>(
    `update orders o set
       cancelled = o.cancelled + o.remaining,
       remaining = 0,
       status = 'CANCELLED',
       cancel_reason = v.reason,
       updated_at = now()
     from unnest(?::uuid[], ?::text[]) as v (id, reason)
     join orders old on old.id = v.id
     where o.id = v.id and o.${LIVE}
     returning o.*, old.remaining::text as removed`,
    [cancels.map((c) => c.id), cancels.map((c) => c.reason)],
  );
  return result.rows;
}

/** Lowers a live order's remainder to `remaining`; the difference counts as cancelled (and is returned). */
export async function decreaseOrder(db: Queryable, orderId: string, remaining: string): Promise<BookRemovalRow | undefined> {
  const result = await db.raw<{ rows: BookRemovalRow[] }>(
    `update orders o set cancelled = o.cancelled + (o.remaining - ?::numeric), remaining = ?::numeric, updated_at = now()
       from orders old
      where o.id = ? and old.id = o.id and o.${LIVE}
      returning o.*, (old.remaining - o.remaining)::text as removed`,
    [remaining, remaining, orderId],
  );
  return result.rows[0];
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
): Promise<OrderRow[]> {
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
export async function bookLevels(db: Queryable, marketId: string, now: Date): Promise<Array<{ book_side: 'bid' | 'ask'; yes_price: string; count: string }>> {
  return db('orders')
    .where({ market_id: marketId })
    .whereRaw(LIVE)
    .where((w) => w.whereNull('expiration_ts').orWhere('expiration_ts', '>', now))
    .groupBy('book_side', 'yes_price')
    .select('book_side', 'yes_price', db.raw('sum(remaining)::text as count'));
}

// --- balances and the ledger

/** Locks the balances of these accounts in account order (the one order every transaction uses). */
export async function lockBalances(db: Queryable, accountIds: readonly string[]): Promise<BalanceRow[]> {
  if (accountIds.length === 0) return [];
  return db<BalanceRow>('balances')
    .whereRaw('user_id = any(?::uuid[])', [[...accountIds]])
    .orderBy('user_id')
    .forNoKeyUpdate()
    .select('user_id', 'cash', 'reserved');
}

export async function findBalance(db: Queryable, accountId: string): Promise<BalanceRow | undefined> {
  return db<BalanceRow>('balances').where({ user_id: accountId }).first('user_id', 'cash', 'reserved');
}

export async function applyBalanceChanges(db: Queryable, changes: ReadonlyArray<{ accountId: string; cash: string; reserved: string }>): Promise<void> {
  if (changes.length === 0) return;
  await db.raw(
    `update balances b set cash = b.cash + v.cash, reserved = b.reserved + v.reserved
       from unnest(?::uuid[], ?::numeric[], ?::numeric[]) as v (user_id, cash, reserved)
      where b.user_id = v.user_id`,
    [changes.map((c) => c.accountId), changes.map((c) => c.cash), changes.map((c) => c.reserved)],
  );
}

export interface NewLedgerEntry {
  user_id: string;
  amount: string;
  reserved_change: string;
  kind: string;
  reference: string;
  market_id: string | null;
}

export async function insertLedgerEntries(db: Queryable, entries: readonly NewLedgerEntry[]): Promise<void> {
  if (entries.length === 0) return;
  for (let i = 0; i < entries.length; i += 1000) await db('ledger_entries').insert(entries.slice(i, i + 1000));
}

// --- positions

export async function findPosition(db: Queryable, accountId: string, marketId: string, side: OrderSide): Promise<{ shares: string; reserved: string } | undefined> {
  return db('positions').where({ account_id: accountId, market_id: marketId, side }).first('shares', 'reserved');
}

/**
 * Adds these (signed) deltas of shares and reserved shares; creates the rows that do not exist yet (their
 * deltas are never negative: nothing can be sold or reserved before it is held). Positions of a market
 * change only under the market's lock, so the update-then-insert cannot race. (Not INSERT ... ON CONFLICT:
 * CHECK constraints are tested on the proposed row, delta included, before the conflict is detected.)
 */
export async function applyPositionChanges(
  db: Queryable,
  marketId: string,
  changes: ReadonlyArray<{ accountId: string; side: OrderSide; shares: string; reserved: string }>,
): Promise<void> {
  if (changes.length === 0) return;
  const updated = await db.raw<{ rows: Array<{ account_id: string; side: string }> }>(
    `update positions p set shares = p.shares + v.shares, reserved = p.reserved + v.reserved, updated_at = now()
       from unnest(?::uuid[], ?::text[], ?::numeric[], ?::numeric[]) as v (account_id, side, shares, reserved)
      where p.market_id = ?::bigint and p.account_id = v.account_id and p.side = v.side
      returning p.account_id, p.side`,
    [changes.map((c) => c.accountId), changes.map((c) => c.side), changes.map((c) => c.shares), changes.map((c) => c.reserved), marketId],
  );
  const done = new Set(updated.rows.map((r) => `${r.account_id}|${r.side}`));
  const missing = changes.filter((c) => !done.has(`${c.accountId}|${c.side}`));
  if (missing.length === 0) return;
  await db('positions').insert(missing.map((c) => ({ account_id: c.accountId, market_id: marketId, side: c.side, shares: c.shares, reserved: c.reserved })));
}

/** Positions of a market holding shares. */
export async function findHoldingsOfMarket(db: Queryable, marketId: string): Promise<Array<{ account_id: string; side: OrderSide; shares: string }>> {
  return db('positions').where({ market_id: marketId }).where('shares', '>', 0).orderBy(['account_id', 'side']).select('account_id', 'side', 'shares');
}

/** An account's positions holding shares, most recently opened first (by id), strictly after `afterId`. */
export async function listPositions(db: Queryable, accountId: string, marketId: string | undefined, afterId: string | undefined, limit: number): Promise<PositionRow[]> {
  const q = db('positions as p').join('markets as m', 'm.id', 'p.market_id').where('p.account_id', accountId).where('p.shares', '>', 0);
  if (marketId !== undefined) q.where('p.market_id', marketId);
  if (afterId !== undefined) q.where('p.id', '<', afterId);
  return q.orderBy('p.id', 'desc').limit(limit).select('p.*', 'm.ticker');
}

// --- trades and fills

export interface NewTrade {
  market_id: string;
  yes_price: string;
  count: string;
  taker_side: OrderSide;
  maker_order_id: string;
  taker_order_id: string;
  kind: string;
}

/** Inserts the trades in execution order; returns their ids in the same order. */
export async function insertTrades(db: Queryable, trades: readonly NewTrade[]): Promise<string[]> {
  if (trades.length === 0) return [];
  const ids: string[] = [];
  for (let i = 0; i < trades.length; i += 1000) {
    const chunk = trades.slice(i, i + 1000);
    const rows: Array<{ id: string; maker_order_id: string; taker_order_id: string }> = await db('trades').insert(chunk).returning(['id', 'maker_order_id', 'taker_order_id']);
    // RETURNING follows the VALUES order; identity values grow with it, so sort by id to be sure.
    rows.sort((a, b) => (BigInt(a.id) < BigInt(b.id) ? -1 : 1));
    ids.push(...rows.map((r) => String(r.id)));
  }
  return ids;
}

export interface NewFill {
  trade_id: string;
  order_id: string;
  account_id: string;
  market_id: string;
  side: OrderSide;
  action: OrderActionColumn;
  price: string;
  count: string;
  role: 'maker' | 'taker';
}

/** Inserts the fills; returns each one's id keyed by `${trade_id}:${role}`. */
export async function insertFills(db: Queryable, fills: readonly NewFill[]): Promise<Map<string, string>> {
  const ids = new Map<string, string>();
  for (let i = 0; i < fills.length; i += 1000) {
    const rows: Array<{ id: string; trade_id: string; role: string }> = await db('fills').insert(fills.slice(i, i + 1000)).returning(['id', 'trade_id', 'role']);
    for (const r of rows) ids.set(`${r.trade_id}:${r.role}`, String(r.id));
  }
  return ids;
}

export async function listFills(db: Queryable, accountId: string, marketId: string | undefined, afterId: string | undefined, limit: number): Promise<FillRow[]> {
  const q = db('fills as f').join('markets as m', 'm.id', 'f.market_id').where('f.account_id', accountId);
  if (marketId !== undefined) q.where('f.market_id', marketId);
  if (afterId !== undefined) q.where('f.id', '<', afterId);
  return q.orderBy('f.id', 'desc').limit(limit).select('f.*', 'm.ticker');
}

export async function listTrades(db: Queryable, marketId: string | undefined, afterId: string | undefined, limit: number): Promise<TradeRow[]> {
  const q = db('trades as t').join('markets as m', 'm.id', 't.market_id');
  if (marketId !== undefined) q.where('t.market_id', marketId);
  if (afterId !== undefined) q.where('t.id', '<', afterId);
  return q.orderBy('t.id', 'desc').limit(limit).select('t.*', 'm.ticker');
}

// --- settlements

export interface NewSettlement {
  account_id: string;
  market_id: string;
  result: 'yes' | 'no' | 'invalid';
  yes_count: string;
  no_count: string;
  payout: string;
}

/** Inserts the settlements; returns each one's id keyed by account id. */
export async function insertSettlements(db: Queryable, settlements: readonly NewSettlement[]): Promise<Map<string, string>> {
  const ids = new Map<string, string>();
  for (let i = 0; i < settlements.length; i += 1000) {
    const rows: Array<{ id: string; account_id: string }> = await db('settlements').insert(settlements.slice(i, i + 1000)).returning(['id', 'account_id']);
    for (const r of rows) ids.set(r.account_id, String(r.id));
  }
  return ids;
}

export async function listSettlements(db: Queryable, accountId: string, marketId: string | undefined, afterId: string | undefined, limit: number): Promise<SettlementRow[]> {
  const q = db('settlements as s').join('markets as m', 'm.id', 's.market_id').where('s.account_id', accountId);
  if (marketId !== undefined) q.where('s.market_id', marketId);
  if (afterId !== undefined) q.where('s.id', '<', afterId);
  return q.orderBy('s.id', 'desc').limit(limit).select('s.*', 'm.ticker');
}

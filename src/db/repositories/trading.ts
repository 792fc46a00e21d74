import type { Db, Queryable } from '../knex.js';
import {
  columnList,
  FILLS_INSERTED,
  LEDGER_ENTRIES_INSERTED,
  ORDERS_INSERTED,
  POSITIONS_INSERTED,
  TRADES_INSERTED,
  type BalancesRow,
  type BookSide,
  type FillRole,
  type FillsRow,
  type NewFill,
  type NewLedgerEntry,
  type NewOrderRow,
  type NewSettlement,
  type NewTrade,
  type OrderSide,
  type OrdersRow,
  type PositionsRow,
  type SettlementsRow,
  type TradesRow,
} from '../tables.js';

/**
 * Queries of trading: orders, fills, trades, positions, balances, settlements and the ledger.
 * Decimal columns travel as strings both ways (never JavaScript numbers); the service converts them
 * to exact units (money.ts). Writes that change several rows take arrays and run as one statement.
 */

export const LIVE = `status in ('OPEN', 'PARTIAL')`;
const utc = (column: string) => `to_char(${column} at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"')`;

export type { OrderActionColumn, OrderSide, OrderStatusColumn } from '../tables.js';

export interface TradingMarketRow {
  id: string;
  ticker: string;
  event_id: string;
  status: 'ACTIVE' | 'CLOSED' | 'RESOLVED';
}

/**
 * An order as read back: its row (but for the columns generated from side, action and price, which views
 * derive themselves), its market's ticker and the sort key of its cursors.
 */
export interface OrderRow extends Omit<OrdersRow, 'book_side' | 'yes_price'> {
  ticker: string;
  /** created_at with microseconds, for cursors. */
  sort_created_at: string;
}

export type PositionRow = PositionsRow & { ticker: string };
export type FillRow = FillsRow & { ticker: string };
export type TradeRow = TradesRow & { ticker: string };
export type SettlementRow = SettlementsRow & { ticker: string };

/**
 * The planner settings of a trading transaction, for the rest of it (SET LOCAL):
 * - generic plans, so that the named statements are planned once per connection. Left to choose, PostgreSQL
 *   re-plans the write statement (persistChanges) for nearly every call, because a plan made for the actual
 *   array sizes looks cheaper; planning it costs about as much as running it.
 * - no sequential scans. A generic plan is kept for the connection's lifetime, and one made while a table
 *   was small (a new database) joins the statement's few rows to a scan of the whole table, which grows
 *   with every order placed (a 10,000-order table scanned by every placement batch was most of its time).
 * Every statement of a trading transaction reads and writes rows by key: an index does that whatever the
 * values and the table's size.
 */
const TRADING_PLANS = [
  ['plan_cache_mode', 'force_generic_plan'],
  ['enable_seqscan', 'off'],
] as const;

export async function useTradingPlans(tx: Queryable): Promise<void> {
  await tx.raw(TRADING_PLANS.map(([name, value]) => `set local ${name} = ${value}`).join('; '));
}

/** TRADING_PLANS as select-list items (set_config(..., true) is SET LOCAL), to set them within another statement. */
const TRADING_PLAN_SETTERS = TRADING_PLANS.map(([name, value]) => `set_config('${name}', '${value}', true)`).join(', ');

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
  const byTicker = await db<TradingMarketRow>('markets').where({ ticker: ref }).forNoKeyUpdate().first(...MARKET_COLUMNS).options({ name: 'dots_lock_market' });
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
export type ChangedOrderRow = OrdersRow;

/** A cancelled or decreased order's row as updated, and the quantity that left the book (for the real-time feed). */
export interface BookRemovalRow extends OrdersRow {
  removed: string;
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

export async function findPosition(db: Queryable, accountId: string, marketId: string, side: OrderSide): Promise<{ shares: string; reserved: string } | undefined> {
  return db('positions').where({ account_id: accountId, market_id: marketId, side }).first('shares', 'reserved');
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

// --- one-statement placement reads and trading writes

/** A live order a placement of the batch could meet. */
export type CrossingOrderRow = Pick<OrdersRow, 'id' | 'account_id' | 'market_id' | 'side' | 'action' | 'price' | 'remaining' | 'expiration_ts' | 'sequence'>;

/** One placement of a batch, as beginPlacements reads for it. */
export interface PlacementRead {
  ref: string;
  accountId: string;
  clientOrderId: string | undefined;
  side: OrderSide;
  sell: boolean;
  /** The book side the placement takes from, and its limit there (YES frame). */
  bookSide: BookSide;
  yesLimit: string;
}

export interface PlacementReads {
  /** The markets the batch names, locked. */
  markets: TradingMarketRow[];
  /** One order sequence number per placement, increasing in placement order. */
  sequences: string[];
  /** [account, client_order_id] pairs of the batch already used by an order. */
  taken: Array<[string, string]>;
  /** The positions the selling placements would sell from. */
  positions: Array<Pick<PositionsRow, 'account_id' | 'market_id' | 'side' | 'shares' | 'reserved'>>;
  crossing: CrossingOrderRow[];
  /** Locked balance rows of the placing accounts and of every crossing order's account. */
  balances: BalancesRow[];
}

/** placements_begin's JSON (src/db/functions/placements_begin.sql): lists of named objects, timestamps as ISO strings. */
interface PlacementsBeginJson extends Omit<PlacementReads, 'taken' | 'crossing'> {
  taken: Array<{ account_id: string; client_order_id: string }>;
  crossing: Array<Omit<CrossingOrderRow, 'expiration_ts'> & { expiration_ts: string | null }>;
}

/**
 * The start of a batch of placements in one round trip (placements_begin): the markets the placements name,
 * locked in id order (as lockMarketsById), then, in statements that see everything committed before the
 * locks were granted, what placing needs: sequence numbers, client_order_ids already taken, the positions
 * sold from, the live orders any placement could meet, and the balance rows of every account the batch can
 * change, locked in account order (as lockBalances). It first does what useTradingPlans does, for itself
 * (the function's statements) and the rest of the transaction.
 */
export async function beginPlacements(db: Queryable, placements: readonly PlacementRead[]): Promise<PlacementReads> {
  const refs = [...new Set(placements.map((p) => p.ref))];
  const result = await db
    // The settings first: a select list is evaluated in order.
    .raw<{ rows: Array<{ reads: PlacementsBeginJson }> }>(`select ${TRADING_PLAN_SETTERS}, placements_begin(?::text[], ?::bigint[], ?::json) as reads`, [
      refs,
      refs.filter((ref) => /^\d{1,18}$/.test(ref)),
      JSON.stringify(
        placements.map((p) => ({
          ref: p.ref,
          account: p.accountId,
          client_order_id: p.clientOrderId ?? null,
          side: p.side,
          sell: p.sell,
          book_side: p.bookSide,
          yes_limit: p.yesLimit,
        })),
      ),
    ] as never)
    .options({ name: 'dots_placements_begin' });
  const reads = result.rows[0]!.reads;
  return {
    ...reads,
    taken: reads.taken.map((t) => [t.account_id, t.client_order_id]),
    crossing: reads.crossing.map((o) => ({ ...o, expiration_ts: o.expiration_ts === null ? null : new Date(o.expiration_ts) })),
  };
}

/** Every write of a trading transaction (see persistChanges). Decimal values as strings. */
export interface TradingWrites {
  /** New orders (placements), inserted first. */
  orders: readonly NewOrderRow[];
  makerFills: ReadonlyArray<{ id: string; count: string }>;
  cancels: ReadonlyArray<{ id: string; reason: string }>;
  decreases: ReadonlyArray<{ id: string; remaining: string }>;
  /** In execution order; fills and ledger entries name them by index. */
  trades: readonly NewTrade[];
  fills: ReadonlyArray<Omit<NewFill, 'trade_id'> & { trade: number }>;
  positions: ReadonlyArray<{ accountId: string; marketId: string; side: OrderSide; shares: string; reserved: string }>;
  balances: ReadonlyArray<{ accountId: string; cash: string; reserved: string }>;
  /** `reference`: a fixed reference, or the fill of (trade index, role). */
  ledger: ReadonlyArray<Omit<NewLedgerEntry, 'reference'> & { reference: string | { trade: number; role: 'maker' | 'taker' } }>;
  markets: ReadonlyArray<{ marketId: string; volume: string; liquidity: string; openInterest: string; lastYesPrice?: string; lastNoPrice?: string }>;
}

export interface TradingWritten {
  /** The new orders as inserted. */
  placed: ChangedOrderRow[];
  filled: ChangedOrderRow[];
  cancelled: BookRemovalRow[];
  decreased: BookRemovalRow[];
  tradeIds: string[];
  /** Fill ids keyed by `${trade_id}:${role}`. */
  fillIds: Map<string, string>;
  figures: Map<string, MarketFiguresRow>;
}

/** A part of persistChanges' one parameter, a JSON object of named lists (`changes` below). */
const part = (name: keyof PersistedChanges) => `(select c.doc -> '${name}' from c)`;

/** persistChanges' statement: one parameter, the JSON object `PersistedChanges`. */
export const PERSIST_CHANGES = `with
     c as (select ?::jsonb as doc),
     ins as (
       insert into orders (${columnList(ORDERS_INSERTED)})
       select ${columnList(ORDERS_INSERTED, 'r')} from jsonb_populate_recordset(null::orders, ${part('orders')}) r
       returning orders.*
     ),
     filled as (
       update orders o set
         remaining = o.remaining - v.count,
         filled = o.filled + v.count,
         status = case when o.remaining - v.count = 0 then 'FILLED' else 'PARTIAL' end,
         updated_at = now()
       from jsonb_to_recordset(${part('maker_fills')}) as v (id uuid, count numeric)
       where o.id = v.id
       returning o.*
     ),
     cancelled as (
       update orders o set
         cancelled = o.cancelled + o.remaining,
         remaining = 0,
         status = 'CANCELLED',
         cancel_reason = v.reason,
         updated_at = now()
       from jsonb_to_recordset(${part('cancels')}) as v (id uuid, reason text)
       join orders old on old.id = v.id
       where o.id = v.id and o.${LIVE}
       returning o.*, old.remaining::text as removed
     ),
     decreased as (
       update orders o set cancelled = o.cancelled + (o.remaining - v.remaining), remaining = v.remaining, updated_at = now()
       from jsonb_to_recordset(${part('decreases')}) as v (id uuid, remaining numeric)
       join orders old on old.id = v.id
       where o.id = v.id and o.${LIVE}
       returning o.*, (old.remaining - o.remaining)::text as removed
     ),
     t as (
       insert into trades (${columnList(TRADES_INSERTED)})
       select ${columnList(TRADES_INSERTED, 'v')}
         from jsonb_populate_recordset(null::trades, ${part('trades')}) with ordinality as v
        order by v.ordinality
       returning trades.id
     ),
     tn as (select t.id, row_number() over (order by t.id) - 1 as ord from t),
     fi as (
       insert into fills (${columnList(FILLS_INSERTED)})
       select ${columnList(FILLS_INSERTED, 'v', { trade_id: 'tn.id' })}
         from jsonb_array_elements(${part('fills')}) with ordinality as e (fill, ord)
        cross join lateral jsonb_populate_record(null::fills, e.fill) as v
         join tn on tn.ord = (e.fill ->> 'trade')::int
        order by e.ord
       returning fills.id, fills.trade_id, fills.role
     ),
     pv as (
       select * from jsonb_to_recordset(${part('positions')}) as v (account_id uuid, market_id bigint, side text, shares numeric, reserved numeric)
     ),
     pu as (
       update positions p set shares = p.shares + v.shares, reserved = p.reserved + v.reserved, updated_at = now()
         from pv v
        where p.market_id = v.market_id and p.account_id = v.account_id and p.side = v.side
       returning p.account_id, p.market_id, p.side
     ),
     pi as (
       insert into positions (${columnList(POSITIONS_INSERTED)})
       select ${columnList(POSITIONS_INSERTED, 'v')}
         from pv v
        where not exists (select 1 from positions p where p.market_id = v.market_id and p.account_id = v.account_id and p.side = v.side)
       returning 1
     ),
     bal as (
       update balances b set cash = b.cash + v.cash, reserved = b.reserved + v.reserved
         from jsonb_to_recordset(${part('balances')}) as v (user_id uuid, cash numeric, reserved numeric)
        where b.user_id = v.user_id
       returning 1
     ),
     led as (
       insert into ledger_entries (${columnList(LEDGER_ENTRIES_INSERTED)})
       select ${columnList(LEDGER_ENTRIES_INSERTED, 'v', { reference: 'coalesce(v.reference, fi.id::text)' })}
         from jsonb_array_elements(${part('ledger')}) with ordinality as e (entry, ord)
        cross join lateral jsonb_populate_record(null::ledger_entries, e.entry) as v
         left join tn on tn.ord = (e.entry ->> 'trade')::int
         left join fi on fi.trade_id = tn.id and fi.role = e.entry ->> 'role'
        order by e.ord
       returning 1
     ),
     ms as (
       update markets m set
         volume = m.volume + v.volume,
         liquidity = m.liquidity + v.liquidity,
         open_interest = m.open_interest + v.open_interest,
         last_yes_price = case when v.has_last then v.last_yes_price else m.last_yes_price end,
         last_no_price = case when v.has_last then v.last_no_price else m.last_no_price end
       from jsonb_to_recordset(${part('markets')})
            as v (id bigint, volume numeric, liquidity numeric, open_interest numeric, has_last boolean, last_yes_price numeric, last_no_price numeric)
       where m.id = v.id
       returning m.id, m.volume, m.open_interest, m.last_yes_price
     )
     select 'placed' as change, i.*, null::text as removed, null::json as written from ins i
     union all select 'filled', f.*, null, null from filled f
     union all select 'cancelled', x.*, null from cancelled x
     union all select 'decreased', d.*, null from decreased d
     union all select 'written', (null::orders).*, null, json_build_object(
       'trade_ids', coalesce((select json_agg(tn.id::text order by tn.ord) from tn), '[]'),
       'fills', coalesce((select json_agg(json_build_object('trade_id', fi.trade_id::text, 'role', fi.role, 'id', fi.id::text)) from fi), '[]'),
       'figures', coalesce((select json_agg(json_build_object('id', ms.id::text, 'volume', ms.volume::text, 'open_interest', ms.open_interest::text,
                                                              'last_yes_price', ms.last_yes_price::text)) from ms), '[]')
     )`;

/** persistChanges' parameter: a list of named records per change, decimals as strings. */
interface PersistedChanges {
  orders: readonly NewOrderRow[];
  maker_fills: ReadonlyArray<{ id: string; count: string }>;
  cancels: ReadonlyArray<{ id: string; reason: string }>;
  decreases: ReadonlyArray<{ id: string; remaining: string }>;
  trades: readonly NewTrade[];
  /** `trade`: the index of the fill's trade in `trades`. */
  fills: ReadonlyArray<Omit<NewFill, 'trade_id'> & { trade: number }>;
  /** Changes of positions (added; a position that does not exist is inserted with them). */
  positions: ReadonlyArray<{ account_id: string; market_id: string; side: OrderSide; shares: string; reserved: string }>;
  /** Changes of balances (added). */
  balances: ReadonlyArray<{ user_id: string; cash: string; reserved: string }>;
  /** `reference` null: the id of the fill of (trade index, role), as text. */
  ledger: ReadonlyArray<NewLedgerEntry & { trade: number | null; role: FillRole | null }>;
  /** Changes of the markets' figures (added); the last prices are set when has_last. */
  markets: ReadonlyArray<{ id: string; volume: string; liquidity: string; open_interest: string; has_last: boolean; last_yes_price: string | null; last_no_price: string | null }>;
}

/** A row of persistChanges' result: an order changed, or (`written`) the ids and figures of the rest. */
type PersistedRow = OrdersRow & {
  change: 'placed' | 'filled' | 'cancelled' | 'decreased' | 'written';
  removed: string | null;
  written: {
    trade_ids: string[];
    fills: Array<{ trade_id: string; role: FillRole; id: string }>;
    figures: Array<{ id: string } & MarketFiguresRow>;
  } | null;
};

/**
 * Writes everything a trading transaction changes in one statement (data-modifying CTEs), its one parameter
 * a JSON object of named records. Each CTE touches different rows (every CTE runs, read or not); foreign keys
 * are checked at the end of the statement. Positions: rows that exist are updated, the others inserted (not
 * INSERT ... ON CONFLICT: CHECK constraints are tested on the proposed row, delta included, before the
 * conflict is detected); positions of a market change only under its lock, so this cannot race. The changed
 * orders come back as rows (so that pg types their columns), told apart by `change`. A named (prepared)
 * statement: planned once per connection, not on every trading transaction.
 */
export async function persistChanges(db: Queryable, w: TradingWrites): Promise<TradingWritten> {
  const changes: PersistedChanges = {
    orders: w.orders,
    maker_fills: w.makerFills,
    cancels: w.cancels,
    decreases: w.decreases,
    trades: w.trades,
    fills: w.fills,
    positions: w.positions.map((p) => ({ account_id: p.accountId, market_id: p.marketId, side: p.side, shares: p.shares, reserved: p.reserved })),
    balances: w.balances.map((b) => ({ user_id: b.accountId, cash: b.cash, reserved: b.reserved })),
    ledger: w.ledger.map(({ reference, ...entry }) =>
      typeof reference === 'string' ? { ...entry, reference, trade: null, role: null } : { ...entry, reference: null, trade: reference.trade, role: reference.role },
    ),
    markets: w.markets.map((m) => ({
      id: m.marketId,
      volume: m.volume,
      liquidity: m.liquidity,
      open_interest: m.openInterest,
      has_last: m.lastYesPrice !== undefined,
      last_yes_price: m.lastYesPrice ?? null,
      last_no_price: m.lastNoPrice ?? null,
    })),
  };
  const result = await db.raw<{ rows: PersistedRow[] }>(PERSIST_CHANGES, [JSON.stringify(changes)]).options({ name: 'dots_trading_persist' });
  const out: TradingWritten = { placed: [], filled: [], cancelled: [], decreased: [], tradeIds: [], fillIds: new Map(), figures: new Map() };
  for (const { change, removed, written, ...order } of result.rows) {
    if (change === 'placed') out.placed.push(order);
    else if (change === 'filled') out.filled.push(order);
    else if (change === 'cancelled') out.cancelled.push({ ...order, removed: removed! });
    else if (change === 'decreased') out.decreased.push({ ...order, removed: removed! });
    else if (written) {
      out.tradeIds = written.trade_ids;
      for (const f of written.fills) out.fillIds.set(`${f.trade_id}:${f.role}`, f.id);
      for (const { id, ...figures } of written.figures) out.figures.set(id, figures);
    }
  }
  return out;
}

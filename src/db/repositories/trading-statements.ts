import { NamedStatement, type Queryable } from '../knex.js';
import { type BalancesRow, type SignedOrderColumn, type BookSide, columnList, type FillRole, FILLS_INSERTED, LEDGER_ENTRIES_INSERTED, type MarketsRow, type NewFill, type NewLedgerEntry, type NewOrder, type NewTrade, ORDERS_INSERTED, type OrdersRow, type Outcome, POSITIONS_INSERTED, type PositionsRow, type SqlType, TRADES_INSERTED } from '../tables.js';

/** What trading reads of a market. */
export type TradingMarketRecord = Pick<MarketsRow, 'id' | 'ticker' | 'event_id' | 'status'>;

/** A market's traded figures after a change (decimal strings), for the real-time feed's ticker. */
export type MarketFiguresRecord = Pick<MarketsRow, 'volume' | 'open_interest' | 'last_yes_price'>;

/** A cancelled or decreased order's row as updated, and the quantity that left the book (for the real-time feed). */
export type BookRemovalRecord = Omit<OrdersRow, SignedOrderColumn> & { removed: string };

/**
 * The two statements of the order path, each one round trip: the reads that start a batch of placements
 * (placements_begin) and the writes of a trading transaction (persistChanges). Both are named (prepared)
 * statements under the trading plan settings. Their data crosses as JSON of named fields both ways.
 */

/**
 * The planner settings of a trading transaction, for the rest of it (SET LOCAL):
 * - generic plans, so that the named statements are planned once per connection. Left to choose, PostgreSQL
 *   re-plans the write statement (persistChanges) for nearly every call, because a plan made for the actual
 *   array sizes looks cheaper; planning it costs about as much as running it.
 * - no sequential scans. A generic plan is kept for the connection's lifetime, and one made while a table
 *   was small (a new database) joins the statement's few rows to a scan of the whole table, which grows
 *   with every order placed (a 10,000-order table scanned by every placement batch was most of its time).
 * - no hash or merge joins. A plan that takes a list for many rows (a JSON list, such as placements_begin's
 *   items, is taken for 100) joins that many to a table by reading all of it through an index (positions by
 *   market, balances, markets: a whole-index read that grows with the table); nested loops look each row up
 *   by its key instead.
 * - no bitmap scans. A bitmap scan never marks the index entries of dead rows as dead, as an index scan does
 *   once it finds them so: the book's index (orders_book) gains a dead entry at every fill and cancel, and
 *   placements_begin's read of the crossing orders, through a bitmap, read them all again on every batch
 *   until a vacuum (a tenth of PostgreSQL's time per placement under load).
 * Every statement of a trading transaction reads and writes rows by key: an index does that whatever the
 * values and the table's size.
 */
const TRADING_PLANS = [
  ['plan_cache_mode', 'force_generic_plan'],
  ['enable_seqscan', 'off'],
  ['enable_hashjoin', 'off'],
  ['enable_mergejoin', 'off'],
  ['enable_bitmapscan', 'off'],
] as const;

export async function useTradingPlans(tx: Queryable): Promise<void> {
  await tx.raw(TRADING_PLANS.map(([name, value]) => `set local ${name} = ${value}`).join('; '));
}

/** TRADING_PLANS as select-list items (set_config(..., true) is SET LOCAL), to set them within another statement. */
const TRADING_PLAN_SETTERS = TRADING_PLANS.map(([name, value]) => `set_config('${name}', '${value}', true)`).join(', ');

/** A live order a placement of the batch could meet. */
export type CrossingOrderRecord = Pick<OrdersRow, 'id' | 'account_id' | 'market_id' | 'side' | 'action' | 'price' | 'remaining' | 'expiration_ts' | 'sequence'>;

/** One placement of a batch, as beginPlacements reads for it. */
export interface PlacementRead {
  ref: string;
  accountId: string;
  clientOrderId: string | undefined;
  side: Outcome;
  sell: boolean;
  /** The book side the placement takes from, and its limit there (YES frame). */
  bookSide: BookSide;
  yesLimit: string;
}

export interface PlacementReads {
  /** The markets the batch names, locked. */
  markets: TradingMarketRecord[];
  /** One order sequence number per placement, increasing in placement order. */
  sequences: string[];
  /** [account, client_order_id] pairs of the batch already used by an order. */
  taken: Array<[string, string]>;
  /** The positions the selling placements would sell from. */
  positions: Array<Pick<PositionsRow, 'account_id' | 'market_id' | 'side' | 'shares' | 'reserved'>>;
  crossing: CrossingOrderRecord[];
  /** Locked balance rows of the placing accounts and of every crossing order's account. */
  balances: BalancesRow[];
}

/** placements_begin's JSON (src/db/functions/placements_begin.sql): lists of named objects, timestamps as ISO strings. */
interface PlacementsBeginJson extends Omit<PlacementReads, 'taken' | 'crossing'> {
  taken: Array<{ account_id: string; client_order_id: string }>;
  crossing: Array<Omit<CrossingOrderRecord, 'expiration_ts'> & { expiration_ts: string | null }>;
}

// The settings first: a select list is evaluated in order.
const PLACEMENTS_BEGIN = new NamedStatement<{ reads: PlacementsBeginJson }>(
  'dots_placements_begin',
  `select ${TRADING_PLAN_SETTERS}, placements_begin(:refs::text[], :numeric_ids::bigint[], :items::json) as reads`,
);

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
  const result = await PLACEMENTS_BEGIN.run(db, {
    refs,
    numeric_ids: refs.filter((ref) => /^\d{1,18}$/.test(ref)),
    items: JSON.stringify(
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
  });
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
  orders: readonly NewOrder[];
  makerFills: ReadonlyArray<{ id: string; count: string }>;
  cancels: ReadonlyArray<{ id: string; reason: string }>;
  decreases: ReadonlyArray<{ id: string; remaining: string }>;
  /** In execution order; fills and ledger entries name them by index. */
  trades: readonly NewTrade[];
  fills: ReadonlyArray<Omit<NewFill, 'trade_id'> & { trade: number }>;
  positions: ReadonlyArray<{ accountId: string; marketId: string; side: Outcome; shares: string; reserved: string }>;
  balances: ReadonlyArray<{ accountId: string; cash: string; reserved: string }>;
  /** `reference`: a fixed reference, or the fill of (trade index, role). */
  ledger: ReadonlyArray<Omit<NewLedgerEntry, 'reference'> & { reference: string | { trade: number; role: FillRole } }>;
  markets: ReadonlyArray<{ marketId: string; volume: string; liquidity: string; openInterest: string; lastYesPrice?: string; lastNoPrice?: string }>;
}

export interface TradingWritten {
  /** The new orders as inserted. */
  placed: OrdersRow[];
  filled: OrdersRow[];
  cancelled: BookRemovalRecord[];
  decreased: BookRemovalRecord[];
  tradeIds: string[];
  /** Fill ids keyed by `${trade_id}:${role}`. */
  fillIds: Map<string, string>;
  figures: Map<string, MarketFiguresRecord>;
}

type Columns = Readonly<Record<string, SqlType>>;

/**
 * A list of records sent as one array parameter per column, bound by name (`:list_column`), and read back as
 * rows `alias (column, ..., ord)`, `ord` numbering them in list order. Arrays rather than a JSON document: a
 * plan made without values takes an array parameter for a few items (10) where it takes a JSON set function
 * for a hundred, and joined to that many a table looks cheaper to read whole (every live order through a
 * partial index) than to look up by key, which the generic plan would keep doing as the table grows. Arrays
 * also cost PostgreSQL less to read than JSON.
 */
const unnestOf = (list: string, columns: Columns, alias: string) =>
  `unnest(${Object.entries(columns)
    .map(([column, type]) => `:${list}_${column}::${type}[]`)
    .join(', ')}) with ordinality as ${alias} (${Object.keys(columns).join(', ')}, ord)`;

/** The parameters of unnestOf(list, columns): one array per column, from these records (missing values null). */
function arraysOf(list: string, columns: Columns, records: ReadonlyArray<Readonly<Record<string, unknown>>>): Record<string, unknown[]> {
  const arrays: Record<string, unknown[]> = {};
  for (const column of Object.keys(columns)) arrays[`${list}_${column}`] = records.map((record) => record[column] ?? null);
  return arrays;
}

const { trade_id: _tradeId, ...FILL_COLUMNS } = FILLS_INSERTED;

/** The lists persistChanges writes, each with its columns: those of the tables' lists, and what joins them. */
const LISTS = {
  orders: ORDERS_INSERTED,
  maker_fills: { id: 'uuid', count: 'numeric' },
  cancels: { id: 'uuid', reason: 'text' },
  decreases: { id: 'uuid', remaining: 'numeric' },
  trades: TRADES_INSERTED,
  /** `trade`: the index of the fill's trade in `trades`. */
  fills: { trade: 'int', ...FILL_COLUMNS },
  /** Changes (added); a position that does not exist is inserted with them. */
  positions: POSITIONS_INSERTED,
  /** Changes (added). */
  balances: { user_id: 'uuid', cash: 'numeric', reserved: 'numeric' },
  /** `reference` null: the id of the fill at index `fill` of `fills`, as text. */
  ledger: { ...LEDGER_ENTRIES_INSERTED, fill: 'int' },
  /** Changes of the markets' figures (added); the last prices are set when has_last. */
  markets: { id: 'bigint', volume: 'numeric', liquidity: 'numeric', open_interest: 'numeric', has_last: 'boolean', last_yes_price: 'numeric', last_no_price: 'numeric' },
} as const satisfies Record<string, Columns>;

type List = keyof typeof LISTS;

/** The rows of a list (unnestOf), as `v` unless named otherwise. */
const rowsOf = (list: List, alias = 'v') => unnestOf(list, LISTS[list], alias);

/**
 * `o` is live, written as `remaining > 0` (the same, by the check constraint orders_live_has_remaining) rather
 * than by status: no index of live orders (a partial index on status) matches it, so each order is looked up
 * by its id whatever the statistics of the table when the plan was made.
 */
const LIVE_BY_REMAINING = 'o.remaining > 0';

/** Where each fill is in `fills`, by `${trade}:${role}`. */
function fillIndexes(fills: TradingWrites['fills']): (reference: { trade: number; role: FillRole }) => number {
  const indexes = new Map(fills.map((f, i) => [`${f.trade}:${f.role}`, i]));
  return ({ trade, role }) => {
    const index = indexes.get(`${trade}:${role}`);
    if (index === undefined) throw new Error(`a ledger entry names the ${role} fill of trade ${trade}, which the writes do not hold`);
    return index;
  };
}

/** persistChanges' statement: the lists of LISTS, each bound as arrays (arraysOf). */
export const PERSIST_CHANGES = `with
     ins as (
       insert into orders (${columnList(ORDERS_INSERTED)})
       select ${columnList(ORDERS_INSERTED, 'r')} from ${rowsOf('orders', 'r')}
       returning orders.*
     ),
     filled as (
       update orders o set
         remaining = o.remaining - v.count,
         filled = o.filled + v.count,
         status = case when o.remaining - v.count = 0 then 'FILLED' else 'PARTIAL' end,
         updated_at = now()
       from ${rowsOf('maker_fills')}
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
       from ${rowsOf('cancels')}
       join orders old on old.id = v.id
       where o.id = v.id and ${LIVE_BY_REMAINING}
       returning o.*, old.remaining::text as removed
     ),
     decreased as (
       update orders o set cancelled = o.cancelled + (o.remaining - v.remaining), remaining = v.remaining, updated_at = now()
       from ${rowsOf('decreases')}
       join orders old on old.id = v.id
       where o.id = v.id and ${LIVE_BY_REMAINING}
       returning o.*, (old.remaining - o.remaining)::text as removed
     ),
     t as (
       insert into trades (${columnList(TRADES_INSERTED)})
       select ${columnList(TRADES_INSERTED, 'v')}
         from ${rowsOf('trades')}
        order by v.ord
       returning trades.id
     ),
     tids as (select coalesce(array_agg(t.id order by t.id), '{}') as ids from t),
     fi as (
       insert into fills (${columnList(FILLS_INSERTED)})
       select ${columnList(FILLS_INSERTED, 'v', { trade_id: '(select tids.ids from tids)[v.trade + 1]' })}
         from ${rowsOf('fills')}
        order by v.ord
       returning fills.id, fills.trade_id, fills.role
     ),
     fids as (select coalesce(array_agg(fi.id order by fi.id), '{}') as ids from fi),
     pv as (
       select * from ${rowsOf('positions')}
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
         from ${rowsOf('balances')}
        where b.user_id = v.user_id
       returning 1
     ),
     led as (
       insert into ledger_entries (${columnList(LEDGER_ENTRIES_INSERTED)})
       select ${columnList(LEDGER_ENTRIES_INSERTED, 'v', { reference: 'coalesce(v.reference, ((select fids.ids from fids)[v.fill + 1])::text)' })}
         from ${rowsOf('ledger')}
        order by v.ord
       returning 1
     ),
     ms as (
       update markets m set
         volume = m.volume + v.volume,
         liquidity = m.liquidity + v.liquidity,
         open_interest = m.open_interest + v.open_interest,
         last_yes_price = case when v.has_last then v.last_yes_price else m.last_yes_price end,
         last_no_price = case when v.has_last then v.last_no_price else m.last_no_price end
       from ${rowsOf('markets')}
       where m.id = v.id
       returning m.id, m.volume, m.open_interest, m.last_yes_price
     )
     select 'placed' as change, i.*, null::text as removed, null::json as written from ins i
     union all select 'filled', f.*, null, null from filled f
     union all select 'cancelled', x.*, null from cancelled x
     union all select 'decreased', d.*, null from decreased d
     union all select 'written', (null::orders).*, null, json_build_object(
       'trade_ids', (select to_json(tids.ids::text[]) from tids),
       'fills', coalesce((select json_agg(json_build_object('trade_id', fi.trade_id::text, 'role', fi.role, 'id', fi.id::text)) from fi), '[]'),
       'figures', coalesce((select json_agg(json_build_object('id', ms.id::text, 'volume', ms.volume::text, 'open_interest', ms.open_interest::text,
                                                              'last_yes_price', ms.last_yes_price::text)) from ms), '[]')
     )`;

/** A row of persistChanges' result: an order changed, or (`written`) the ids and figures of the rest. */
type PersistedRecord = OrdersRow & {
  change: 'placed' | 'filled' | 'cancelled' | 'decreased' | 'written';
  removed: string | null;
  written: {
    trade_ids: string[];
    fills: Array<{ trade_id: string; role: FillRole; id: string }>;
    figures: Array<{ id: string } & MarketFiguresRecord>;
  } | null;
};

const PERSIST = new NamedStatement<PersistedRecord>('dots_trading_persist', PERSIST_CHANGES);

/**
 * Writes everything a trading transaction changes in one statement (data-modifying CTEs), its lists of
 * records bound as arrays, one per column (LISTS). Each CTE touches different rows (every CTE runs, read or not); foreign keys
 * are checked at the end of the statement. Positions: rows that exist are updated, the others inserted (not
 * INSERT ... ON CONFLICT: CHECK constraints are tested on the proposed row, delta included, before the
 * conflict is detected); positions of a market change only under its lock, so this cannot race. Trades and
 * fills are inserted in list order and take their ids from their identity sequences row by row, so their new
 * ids in ascending order are in list order: a fill finds its trade's id, and a ledger entry its fill's id, by
 * position in that array (joining the inserted rows instead, with nested loops only, grows with the square of
 * the trades). The changed orders come back as rows (so that pg types their columns), told apart by `change`.
 * A named (prepared) statement: planned once per connection, not on every trading transaction.
 */
export async function persistChanges(db: Queryable, w: TradingWrites): Promise<TradingWritten> {
  const fillOf = fillIndexes(w.fills);
  const records: Record<List, ReadonlyArray<Readonly<Record<string, unknown>>>> = {
    orders: w.orders,
    maker_fills: w.makerFills,
    cancels: w.cancels,
    decreases: w.decreases,
    trades: w.trades,
    fills: w.fills,
    positions: w.positions.map((p) => ({ account_id: p.accountId, market_id: p.marketId, side: p.side, shares: p.shares, reserved: p.reserved })),
    balances: w.balances.map((b) => ({ user_id: b.accountId, cash: b.cash, reserved: b.reserved })),
    ledger: w.ledger.map(({ reference, ...entry }) => (typeof reference === 'string' ? { ...entry, reference } : { ...entry, reference: null, fill: fillOf(reference) })),
    markets: w.markets.map((m) => ({
      id: m.marketId,
      volume: m.volume,
      liquidity: m.liquidity,
      open_interest: m.openInterest,
      has_last: m.lastYesPrice !== undefined,
      last_yes_price: m.lastYesPrice,
      last_no_price: m.lastNoPrice,
    })),
  };
  const bindings: Record<string, unknown[]> = {};
  for (const list of Object.keys(LISTS) as List[]) Object.assign(bindings, arraysOf(list, LISTS[list], records[list]));
  const result = await PERSIST.run(db, bindings);
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

/**
 * What trading gives back, as clients see it: snake_case fields, decimal strings (prices with two places,
 * counts with up to four, Dots exact), `Z` timestamps. Built here from stored records, for the REST
 * responses (src/presenters/trading.ts) and the real-time feed (src/domain/feed/messages.ts) alike.
 */
import type { BookLevelRecord, OrderRecord, PositionRecord, SettlementRecord, TradeRecord } from '../../db/repositories/trading.js';
import { formatLots, formatMoney, formatTicks, iso, lotsOf, microOf, TICKS_PER_DOT, ticksOf } from './money.js';
import type { Action, BalancesRow, FillRole, MarketResult, OrderStatus, Outcome, TimeInForce } from '../../db/tables.js';

/** The order record, with `market_id` and `action`. */
export interface OrderView {
  order_id: string;
  market_id: string;
  ticker: string;
  side: Outcome;
  action: Action;
  type: 'LIMIT';
  time_in_force: TimeInForce;
  /** Outcome-frame price, two places ("0.45"). */
  price: string;
  /** The original count; decrease and cancel lower `remaining_count` only. */
  count: string;
  fill_count: string;
  remaining_count: string;
  status: OrderStatus;
  /** The client's id, or one the service generated (a UUID) when none was sent. */
  client_order_id: string;
  /** 0x-prefixed bytes32; all zeros when none was sent. */
  builder_code: string;
  builder_maker_fee_bps: 0;
  builder_taker_fee_bps: 0;
  expiration_ts: string | null;
  post_only: boolean;
  reduce_only: boolean;
  created_at: string;
  updated_at: string;
}

export interface FeeBreakdown {
  role: FillRole;
  platform_fee_bps: 0;
  builder_fee_bps: 0;
  platform_fee: string;
  builder_fee: string;
  total_fee: string;
  cash_required: string;
  net_proceeds: string;
}

/** What an order would reserve and whether the account can afford it; money with exactly two places. */
export interface PreviewView {
  market_id: string;
  ticker: string;
  side: 'YES' | 'NO';
  action: Action;
  price: string;
  count: string;
  notional: string;
  reserve_required: string;
  available_balance: string;
  sufficient_balance: boolean;
  position_available: string | null;
  sufficient_position: boolean | null;
  platform_taker_fee_bps: 0;
  platform_maker_fee_bps: 0;
  builder_code: string;
  builder_maker_fee_bps: 0;
  builder_taker_fee_bps: 0;
  maker: FeeBreakdown;
  taker: FeeBreakdown;
}

export type BatchCancelItem = { order_id: string; status: 'cancelled' } | { order_id: string; error: string };

export interface BalanceView {
  /** Cash not reserved plus reserved: everything the account holds in Dots. */
  balance: string;
  reserved: string;
  available: string;
}

export interface PositionView {
  market_id: string;
  ticker: string;
  side: Outcome;
  /** Shares held. */
  count: string;
  /** Shares held less those reserved by resting sells. */
  available: string;
  updated_at: string;
}

export interface FillView {
  fill_id: string;
  order_id: string;
  market_id: string;
  ticker: string;
  side: Outcome;
  action: Action;
  /** The caller's outcome-frame price. */
  price: string;
  count: string;
  role: FillRole;
  created_at: string;
}

export interface SettlementView {
  settlement_id: string;
  market_id: string;
  ticker: string;
  result: MarketResult;
  yes_count: string;
  no_count: string;
  /** Dots paid to the account. */
  payout: string;
  created_at: string;
}

/** One execution on the public tape. */
export interface TradeView {
  trade_id: string;
  market_id: string;
  ticker: string;
  yes_price: string;
  no_price: string;
  count: string;
  taker_side: Outcome;
  created_at: string;
}

export interface OrderbookView {
  /** Resting bids of each outcome, best first: [price, count]. */
  yes: Array<[string, string]>;
  no: Array<[string, string]>;
}

/** What a view of an order reads of its record. */
type OrderFields = Pick<
  OrderRecord,
  | 'id' | 'market_id' | 'ticker' | 'side' | 'action' | 'time_in_force' | 'price' | 'count' | 'filled' | 'remaining' | 'status'
  | 'client_order_id' | 'builder_code' | 'expiration_ts' | 'post_only' | 'reduce_only' | 'created_at' | 'updated_at'
>;

export function orderView(row: OrderFields): OrderView {
  return {
    order_id: row.id,
    market_id: String(row.market_id),
    ticker: row.ticker,
    side: row.side,
    action: row.action,
    type: 'LIMIT',
    time_in_force: row.time_in_force,
    price: formatTicks(ticksOf(row.price)),
    count: formatLots(lotsOf(row.count)),
    fill_count: formatLots(lotsOf(row.filled)),
    remaining_count: formatLots(lotsOf(row.remaining)),
    status: row.status,
    client_order_id: row.client_order_id,
    builder_code: row.builder_code,
    builder_maker_fee_bps: 0,
    builder_taker_fee_bps: 0,
    expiration_ts: row.expiration_ts ? iso(row.expiration_ts) : null,
    post_only: row.post_only,
    reduce_only: row.reduce_only,
    created_at: iso(row.created_at),
    updated_at: iso(row.updated_at),
  };
}

/** Resting quantity per book side and YES-frame price, as the orderbook endpoint and the feed's snapshots show it. */
export function orderbookView(rows: readonly BookLevelRecord[]): OrderbookView {
  const levels = rows.map((l) => ({ side: l.book_side, price: ticksOf(l.yes_price), lots: lotsOf(l.count) }));
  const level = (price: number, lots: bigint): [string, string] => [formatTicks(price), formatLots(lots)];
  return {
    // YES bids: the bids, highest first. NO bids: the asks seen from NO (an ask at p is a NO bid at 1 - p), best first.
    yes: levels.filter((l) => l.side === 'bid').sort((a, b) => b.price - a.price).map((l) => level(l.price, l.lots)),
    no: levels.filter((l) => l.side === 'ask').sort((a, b) => a.price - b.price).map((l) => level(TICKS_PER_DOT - l.price, l.lots)),
  };
}

/** A balance row (micro-Dots as stored; none: an account that holds nothing). */
export function balanceView(row: Pick<BalancesRow, 'cash' | 'reserved'> | undefined): BalanceView {
  const cash = row ? microOf(row.cash) : 0n;
  const reserved = row ? microOf(row.reserved) : 0n;
  return { balance: formatMoney(cash + reserved), reserved: formatMoney(reserved), available: formatMoney(cash) };
}

export function positionView(row: Pick<PositionRecord, 'market_id' | 'ticker' | 'side' | 'shares' | 'reserved' | 'updated_at'>): PositionView {
  return {
    market_id: String(row.market_id),
    ticker: row.ticker,
    side: row.side,
    count: formatLots(lotsOf(row.shares)),
    available: formatLots(lotsOf(row.shares) - lotsOf(row.reserved)),
    updated_at: iso(row.updated_at),
  };
}

/** A fill as read: the view's fields, with its id and time as stored. */
export function fillView(row: Omit<FillView, 'fill_id' | 'created_at'> & { id: string; created_at: Date }): FillView {
  return {
    fill_id: String(row.id),
    order_id: row.order_id,
    market_id: String(row.market_id),
    ticker: row.ticker,
    side: row.side,
    action: row.action,
    price: formatTicks(ticksOf(row.price)),
    count: formatLots(lotsOf(row.count)),
    role: row.role,
    created_at: iso(row.created_at),
  };
}

export function settlementView(row: Pick<SettlementRecord, 'id' | 'market_id' | 'ticker' | 'result' | 'yes_count' | 'no_count' | 'payout' | 'created_at'>): SettlementView {
  return {
    settlement_id: String(row.id),
    market_id: String(row.market_id),
    ticker: row.ticker,
    result: row.result,
    yes_count: formatLots(lotsOf(row.yes_count)),
    no_count: formatLots(lotsOf(row.no_count)),
    payout: formatMoney(microOf(row.payout)),
    created_at: iso(row.created_at),
  };
}

export function tradeView(row: Pick<TradeRecord, 'id' | 'market_id' | 'ticker' | 'yes_price' | 'count' | 'taker_side' | 'created_at'>): TradeView {
  const yes = ticksOf(row.yes_price);
  return {
    trade_id: String(row.id),
    market_id: String(row.market_id),
    ticker: row.ticker,
    yes_price: formatTicks(yes),
    no_price: formatTicks(TICKS_PER_DOT - yes),
    count: formatLots(lotsOf(row.count)),
    taker_side: row.taker_side,
    created_at: iso(row.created_at),
  };
}

import { createHash } from 'node:crypto';
import type { AccountTradeRecord, ClobMarketRecord } from '../../db/repositories/clob.js';
import type { Outcome, OrdersRow } from '../../db/tables.js';
import { invalid, type DomainError } from '../errors.js';
import { yesPriceOf } from '../trading/book.js';
import { lotsOf, ticksOf } from '../trading/money.js';
import { formatLots, formatMicroDots, formatTicks, notionalMicroDots } from '../trading/money.js';
import type { BatchCancelItem, OrderView } from '../trading/views.js';

/**
 * The order-book (CLOB) client's shapes, built from stored rows (pure). Prices are in the frame of the
 * outcome token named (a NO token's prices are 1 - the YES frame's), decimals as strings where the client
 * reads strings and as JSON numbers where its types say number.
 */

export const TICK_SIZE = '0.01' as const;
/** The smallest order: one lot. */
export const MIN_ORDER_SIZE = '0.0001';

/** The first page's cursor and the cursor after the last page, as the client pages (base64 of 0 and of -1). */
export const FIRST_CURSOR = 'MA==';
export const END_CURSOR = 'LTE=';

/**
 * A page cursor: base64 of the last key of the page before (a non-negative integer); absent or `MA==` for
 * the first page; `LTE=` past the last (an empty page).
 */
export function cursorKey(cursor: string | undefined): bigint | 'end' | undefined {
  if (cursor === undefined || cursor === '' || cursor === FIRST_CURSOR) return undefined;
  if (cursor === END_CURSOR) return 'end';
  const text = /^[A-Za-z0-9+/_-]{1,40}={0,2}$/.test(cursor) ? Buffer.from(cursor, 'base64').toString('utf8') : '';
  if (!/^\d{1,19}$/.test(text)) throw invalid('next_cursor is not a cursor of this collection: pass back the previous page\'s next_cursor verbatim', [{ location: 'query', path: 'next_cursor', message: 'malformed cursor' }]);
  return BigInt(text);
}

/** The cursor of the page after one whose last key is `last`, or END_CURSOR when it was the last page. */
export const nextCursor = (last: string | undefined, more: boolean): string => (more && last !== undefined ? Buffer.from(last).toString('base64') : END_CURSOR);

export const outcomeName = (side: Outcome): 'Yes' | 'No' => (side === 'yes' ? 'Yes' : 'No');
export const tokenOf = (market: Pick<ClobMarketRecord, 'yes_token_id' | 'no_token_id'>, side: Outcome): string => (side === 'yes' ? market.yes_token_id : market.no_token_id);
/** The outcome of one of the market's tokens. */
export const outcomeOfToken = (market: Pick<ClobMarketRecord, 'yes_token_id'>, tokenId: string): Outcome => (market.yes_token_id === tokenId ? 'yes' : 'no');

/** A decimal of two-hundredths (a midpoint in ticks x 2), without trailing zeros: 99 -> '0.495', 100 -> '0.5'. */
export function halfTicksText(halfTicks: number): string {
  return trimZeros(formatMicroDots(BigInt(halfTicks) * 5000n, 6));
}

export const trimZeros = (text: string): string => (text.includes('.') ? text.replace(/0+$/, '').replace(/\.$/, '') : text);

export interface BookLevel {
  price: string;
  size: string;
}

export interface OrderBookSummary {
  market: string;
  asset_id: string;
  timestamp: string;
  hash: string;
  bids: BookLevel[];
  asks: BookLevel[];
  min_order_size: string;
  tick_size: typeof TICK_SIZE;
  neg_risk: boolean;
  last_trade_price: string;
}

/** Best bid and best ask of a token's book (ticks, its frame), when there are. */
export interface BookTop {
  bid?: number;
  ask?: number;
}

/**
 * One token's book from the market's YES-frame levels: for YES the bids and asks as they are, for NO the
 * asks seen from NO as its bids (and the reverse), prices 1 - p. Bids ascending and asks descending, so that
 * the best of each is last (as the client reads them).
 */
export function tokenBook(side: Outcome, levels: ReadonlyArray<{ book_side: 'bid' | 'ask'; yes_price: string; count: string }>) {
  const seen = levels.map((l) => ({ bid: (l.book_side === 'bid') === (side === 'yes'), ticks: yesPriceOf(side, ticksOf(l.yes_price)), lots: lotsOf(l.count) }));
  const level = (l: { ticks: number; lots: bigint }): BookLevel => ({ price: formatTicks(l.ticks), size: formatLots(l.lots) });
  const bids = seen.filter((l) => l.bid).sort((a, b) => a.ticks - b.ticks);
  const asks = seen.filter((l) => !l.bid).sort((a, b) => b.ticks - a.ticks);
  return { bids: bids.map(level), asks: asks.map(level), top: { bid: bids.at(-1)?.ticks, ask: asks.at(-1)?.ticks } satisfies BookTop };
}

/** The summary with its hash: SHA-1 of its JSON with `hash` empty, as the client computes it. */
export function withHash(summary: Omit<OrderBookSummary, 'hash'>): OrderBookSummary {
  const { market, asset_id, timestamp, bids, asks, min_order_size, tick_size, neg_risk, last_trade_price } = summary;
  const ordered = { market, asset_id, timestamp, hash: '', bids, asks, min_order_size, tick_size, neg_risk, last_trade_price };
  return { ...ordered, hash: createHash('sha1').update(JSON.stringify(ordered)).digest('hex') };
}

/** Cancel results in the client's shape: the ids cancelled, and why each other one was not. */
export function cancelAnswer(results: readonly BatchCancelItem[]): { canceled: string[]; not_canceled: Record<string, string> } {
  const answer = { canceled: [] as string[], not_canceled: {} as Record<string, string> };
  for (const result of results) {
    if ('error' in result) answer.not_canceled[result.order_id] = result.error;
    else answer.canceled.push(result.order_id);
  }
  return answer;
}

/** The client's order statuses. */
const ORDER_STATUS = { OPEN: 'LIVE', PARTIAL: 'LIVE', FILLED: 'MATCHED', CANCELLED: 'CANCELED' } as const;

/** The client's order type of an order: IOC is its FAK; GTC with an expiry its GTD. */
export function orderTypeOf(order: Pick<OrdersRow, 'time_in_force' | 'expiration_ts'>): 'GTC' | 'GTD' | 'FOK' | 'FAK' {
  if (order.time_in_force === 'IOC') return 'FAK';
  if (order.time_in_force === 'FOK') return 'FOK';
  return order.expiration_ts ? 'GTD' : 'GTC';
}

const unixSeconds = (date: Date): number => Math.floor(date.getTime() / 1000);

export interface OpenOrderView {
  id: string;
  status: 'LIVE' | 'MATCHED' | 'CANCELED';
  owner: string;
  maker_address: string;
  market: string;
  asset_id: string;
  side: 'BUY' | 'SELL';
  original_size: string;
  size_matched: string;
  price: string;
  associate_trades: string[];
  outcome: 'Yes' | 'No';
  created_at: number;
  expiration: string;
  order_type: 'GTC' | 'GTD' | 'FOK' | 'FAK';
}

export function openOrderView(order: OrdersRow, market: ClobMarketRecord): OpenOrderView {
  return {
    id: order.id,
    status: ORDER_STATUS[order.status],
    owner: order.account_id,
    maker_address: order.maker_address ?? '',
    market: market.condition_id,
    asset_id: tokenOf(market, order.side),
    side: order.action === 'buy' ? 'BUY' : 'SELL',
    original_size: formatLots(lotsOf(order.count)),
    size_matched: formatLots(lotsOf(order.filled)),
    price: formatTicks(ticksOf(order.price)),
    associate_trades: [],
    outcome: outcomeName(order.side),
    created_at: unixSeconds(order.created_at),
    expiration: order.expiration_ts ? String(unixSeconds(order.expiration_ts)) : '0',
    order_type: orderTypeOf(order),
  };
}

export interface ClobMarketView {
  condition_id: string;
  question_id: string;
  tokens: Array<{ token_id: string; outcome: 'Yes' | 'No'; price: number; winner: boolean }>;
  rewards: { min_size: number; max_spread: number; rates: null };
  minimum_order_size: number;
  minimum_tick_size: number;
  description: string;
  category: string;
  end_date_iso: string;
  game_start_time: null;
  question: string;
  market_slug: string;
  min_incentive_size: string;
  max_incentive_spread: string;
  active: boolean;
  closed: boolean;
  archived: boolean;
  accepting_orders: boolean;
  accepting_order_timestamp: string;
  seconds_delay: number;
  icon: string;
  image: string;
  fpmm: string;
  neg_risk: boolean;
  neg_risk_market_id: string;
  neg_risk_request_id: string;
  maker_base_fee: 0;
  taker_base_fee: 0;
  notifications_enabled: boolean;
  is_50_50_outcome: boolean;
  enable_order_book: boolean;
  tags: string[];
}

/** A market in the client's shape; `price` of each token is its last traded price (0 before the first trade). */
export function clobMarketView(m: ClobMarketRecord): ClobMarketView {
  const last = m.last_yes_price === null ? undefined : ticksOf(m.last_yes_price);
  const priceOf = (side: Outcome) => (last === undefined ? 0 : Number(formatTicks(yesPriceOf(side, last))));
  const winner = (side: Outcome) => m.status === 'RESOLVED' && m.result === side;
  return {
    condition_id: m.condition_id,
    question_id: m.condition_id,
    tokens: (['yes', 'no'] as const).map((side) => ({ token_id: tokenOf(m, side), outcome: outcomeName(side), price: priceOf(side), winner: winner(side) })),
    rewards: { min_size: m.rewards_min_size === null ? 0 : Number(m.rewards_min_size), max_spread: m.rewards_max_spread === null ? 0 : Number(m.rewards_max_spread), rates: null },
    minimum_order_size: Number(MIN_ORDER_SIZE),
    minimum_tick_size: Number(TICK_SIZE),
    description: m.event_description,
    category: '',
    end_date_iso: m.strike_date.toISOString(),
    game_start_time: null,
    question: m.title,
    market_slug: m.ticker,
    min_incentive_size: m.rewards_min_size ?? '',
    max_incentive_spread: m.rewards_max_spread ?? '',
    active: m.status === 'ACTIVE',
    closed: m.status !== 'ACTIVE',
    archived: false,
    accepting_orders: m.status === 'ACTIVE',
    accepting_order_timestamp: m.created_at.toISOString(),
    seconds_delay: 0,
    icon: '',
    image: '',
    fpmm: '',
    neg_risk: m.neg_risk,
    neg_risk_market_id: '',
    neg_risk_request_id: '',
    maker_base_fee: 0,
    taker_base_fee: 0,
    notifications_enabled: false,
    is_50_50_outcome: false,
    enable_order_book: true,
    tags: [],
  };
}

export const sideName = (action: 'buy' | 'sell'): 'BUY' | 'SELL' => (action === 'buy' ? 'BUY' : 'SELL');

export interface ClobTradeView {
  id: string;
  taker_order_id: string;
  market: string;
  asset_id: string;
  side: 'BUY' | 'SELL';
  size: string;
  fee_rate_bps: '0';
  price: string;
  status: 'CONFIRMED';
  match_time: string;
  last_update: string;
  outcome: 'Yes' | 'No';
  bucket_index: 0;
  owner: string;
  maker_address: string;
  maker_orders: Array<{
    order_id: string;
    owner: string;
    maker_address: string;
    matched_amount: string;
    price: string;
    fee_rate_bps: '0';
    asset_id: string;
    outcome: 'Yes' | 'No';
    side: 'BUY' | 'SELL';
  }>;
  transaction_hash: '';
  trader_side: 'TAKER' | 'MAKER';
}

/** One of the account's fills as the client's trade: the taker's terms, and the maker's order in `maker_orders`. */
export function tradeView(row: AccountTradeRecord, market: ClobMarketRecord, accountId: string): ClobTradeView {
  const yes = ticksOf(row.yes_price);
  const size = formatLots(lotsOf(row.count));
  const time = String(Math.floor(row.created_at.getTime() / 1000));
  const mine = (account: string) => account === accountId;
  return {
    id: String(row.trade_id),
    taker_order_id: row.taker_order_id,
    market: market.condition_id,
    asset_id: tokenOf(market, row.taker_side),
    side: sideName(row.taker_action),
    size,
    fee_rate_bps: '0',
    price: formatTicks(yesPriceOf(row.taker_side, yes)),
    status: 'CONFIRMED',
    match_time: time,
    last_update: time,
    outcome: outcomeName(row.taker_side),
    bucket_index: 0,
    owner: mine(row.taker_account_id) ? row.taker_account_id : '',
    maker_address: mine(row.taker_account_id) ? (row.taker_address ?? '') : '',
    maker_orders: [
      {
        order_id: row.maker_order_id,
        owner: mine(row.maker_account_id) ? row.maker_account_id : '',
        maker_address: mine(row.maker_account_id) ? (row.maker_address ?? '') : '',
        matched_amount: size,
        price: formatTicks(yesPriceOf(row.maker_side, yes)),
        fee_rate_bps: '0',
        asset_id: tokenOf(market, row.maker_side),
        outcome: outcomeName(row.maker_side),
        side: sideName(row.maker_action),
      },
    ],
    transaction_hash: '',
    trader_side: row.role === 'taker' ? 'TAKER' : 'MAKER',
  };
}

/** The client's answer to a placement. */
export interface PostOrderAnswer {
  success: boolean;
  errorMsg: string;
  orderID: string;
  transactionsHashes: never[];
  status: 'live' | 'matched' | 'unmatched' | '';
  makingAmount: string;
  takingAmount: string;
}

export function refusal(error: DomainError): PostOrderAnswer {
  return { success: false, errorMsg: error.message, orderID: '', transactionsHashes: [], status: '', makingAmount: '0', takingAmount: '0' };
}

/**
 * A placed order's answer: `live` while it rests, `matched` once wholly filled, `unmatched` when its
 * remainder was cancelled (FOK, FAK) unfilled. The amounts matched at once, at its limit price: a BUY makes
 * (gives) price x filled collateral and takes filled shares; a SELL the reverse.
 */
export function placedAnswer(order: OrderView): PostOrderAnswer {
  const filled = lotsOf(order.fill_count);
  const collateral = trimZeros(formatMicroDots(notionalMicroDots(ticksOf(order.price), filled)));
  const shares = formatLots(filled);
  const [making, taking] = order.action === 'buy' ? [collateral, shares] : [shares, collateral];
  const status = order.status === 'OPEN' || order.status === 'PARTIAL' ? 'live' : order.status === 'FILLED' ? 'matched' : 'unmatched';
  return { success: true, errorMsg: '', orderID: order.order_id, transactionsHashes: [], status, makingAmount: making, takingAmount: taking };
}

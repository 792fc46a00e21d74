/**
 * What trading takes (as clients send it) and the operations it offers; what it gives back is in views.ts.
 */
import type { Action, OrderStatus, Outcome, TimeInForce } from '../../db/tables.js';
import type { SignedRecord } from '../clob/signed-order.js';
import type { Candle, CandleRequest, PricePoint } from './candles.js';
import type {
  BalanceView,
  BatchCancelItem,
  FillView,
  OrderbookView,
  OrderView,
  PositionView,
  PreviewView,
  SettlementView,
  TradeView,
} from './views.js';

/** As sent: `bid` aliases YES and `ask` aliases NO. */
export type RequestedSide = Outcome | 'bid' | 'ask';

export interface PreviewInput {
  ticker: string;
  side: RequestedSide;
  action?: Action;
  count: string;
  price: string;
  builder_code?: string;
  /** Fee fields (FEE_FIELDS of input.ts): accepted only as zero, the exchange being fee-free. */
  builder_maker_fee_bps?: unknown;
  builder_taker_fee_bps?: unknown;
  fee_rate_bps?: unknown;
  platform_maker_fee_bps?: unknown;
  platform_taker_fee_bps?: unknown;
  feeRateBps?: unknown;
}

export interface PlaceOrderInput extends PreviewInput {
  type?: 'LIMIT';
  time_in_force?: TimeInForce;
  client_order_id?: string;
  post_only?: boolean;
  reduce_only?: boolean;
  /** RFC 3339, in the future. */
  expiration_ts?: string;
  /**
   * What an order-book client's signed order was signed with (src/domain/clob/), kept on the order. Set by the
   * service only: the placement schemas allow no such field on the wire.
   */
  signed?: SignedRecord;
}

export interface ListOrdersInput {
  ticker?: string;
  market?: string;
  status?: OrderStatus[];
  limit: number;
  cursor?: string;
}

/** What one order of a batch placement came to: the order placed, or the error that refused it (a DomainError when a rule did). */
export type PlacementOutcome = { order: OrderView } | { error: unknown };

export interface CursorPage {
  ticker?: string;
  limit: number;
  cursor?: string;
}

/**
 * Trading as handlers call it (service.ts implements it; `services.trading`). Every failure is a DomainError:
 * invalid_request (400), not_found (404: unknown, or another account's order), conflict (409: order not
 * live, duplicate client_order_id, market not ACTIVE).
 */
export interface Trading {
  previewOrder(accountId: string, input: PreviewInput): Promise<PreviewView>;
  placeOrder(accountId: string, input: PlaceOrderInput): Promise<OrderView>;
  /** Up to 20 orders placed as if one after another, in one transaction where possible: each one's outcome, in order. */
  placeOrders(accountId: string, inputs: readonly PlaceOrderInput[]): Promise<PlacementOutcome[]>;
  listOrders(accountId: string, input: ListOrdersInput): Promise<{ cursor: string | null; orders: OrderView[] }>;
  getOrder(accountId: string, orderId: string): Promise<OrderView>;
  cancelOrder(accountId: string, orderId: string): Promise<void>;
  /** `market` (id or ticker) or `ticker`, not both; neither: every live order (market_id ""). */
  cancelAllOrders(accountId: string, input: { market?: string; ticker?: string }): Promise<{ cancelled: number; market_id: string }>;
  /** `count` is the new remaining count: smaller than the current one, on the 0.0001 quantum. */
  decreaseOrder(accountId: string, orderId: string, count: string): Promise<void>;
  cancelOrders(accountId: string, orderIds: string[]): Promise<BatchCancelItem[]>;
  getBalance(accountId: string): Promise<BalanceView>;
  listPositions(accountId: string, input: CursorPage): Promise<{ cursor: string | null; positions: PositionView[] }>;
  listFills(accountId: string, input: CursorPage): Promise<{ cursor: string | null; fills: FillView[] }>;
  listSettlements(accountId: string, input: CursorPage): Promise<{ cursor: string | null; settlements: SettlementView[] }>;
  listTrades(input: CursorPage): Promise<{ cursor: string | null; trades: TradeView[] }>;
  getOrderbook(ticker: string): Promise<OrderbookView>;
  /** A market's candles (candles.ts): not_found when it is unknown or not in the series; invalid_request for a bad range. */
  getMarketCandles(seriesTicker: string, ticker: string, request: CandleRequest): Promise<{ ticker: string; candles: Candle[] }>;
  /** Several markets' candles over one range, in the order given (each once). */
  getMarketsCandles(tickers: readonly string[], request: CandleRequest): Promise<Array<{ ticker: string; candles: Candle[] }>>;
  /**
   * A market's (ticker or id) price history: per period of `fidelity` minutes ending in [start, end] (Unix
   * seconds), `t` its end and `p` the last trade's YES price by then (decimal string), from the market's first
   * trade on. invalid_request when start > end or beyond MAX_PERIODS periods, not_found for an unknown market.
   */
  priceHistory(market: string, range: { start: number; end: number }, fidelity: number): Promise<PricePoint[]>;
}

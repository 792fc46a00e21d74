/**
 * What the trading service takes and gives: the wire shapes of the order-management, portfolio and
 * market-data operations (snake_case, decimal strings, `Z` timestamps). Handlers pass these through;
 * the service (service.ts) produces them.
 */
import type { TimeInForce } from './book.js';

export type OrderStatus = 'OPEN' | 'PARTIAL' | 'FILLED' | 'CANCELLED';
/** As sent: `bid` aliases YES and `ask` aliases NO. */
export type RequestedSide = 'yes' | 'no' | 'bid' | 'ask';
export type OrderAction = 'buy' | 'sell';

/** The order record (specification 2.1), plus `market_id` and `action`. */
export interface OrderView {
  order_id: string;
  market_id: string;
  ticker: string;
  side: 'yes' | 'no';
  action: OrderAction;
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

export interface PreviewInput {
  ticker: string;
  side: RequestedSide;
  action?: OrderAction;
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
}

export interface FeeBreakdown {
  role: 'maker' | 'taker';
  platform_fee_bps: 0;
  builder_fee_bps: 0;
  platform_fee: string;
  builder_fee: string;
  total_fee: string;
  cash_required: string;
  net_proceeds: string;
}

/** Specification 2.2. */
export interface PreviewView {
  market_id: string;
  ticker: string;
  side: 'YES' | 'NO';
  action: OrderAction;
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

export interface ListOrdersInput {
  ticker?: string;
  market?: string;
  status?: OrderStatus[];
  limit: number;
  cursor?: string;
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
  side: 'yes' | 'no';
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
  side: 'yes' | 'no';
  action: OrderAction;
  /** The caller's outcome-frame price. */
  price: string;
  count: string;
  role: 'maker' | 'taker';
  created_at: string;
}

export interface SettlementView {
  settlement_id: string;
  market_id: string;
  ticker: string;
  result: 'yes' | 'no' | 'invalid';
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
  taker_side: 'yes' | 'no';
  created_at: string;
}

export interface OrderbookView {
  /** Resting bids of each outcome, best first: [price, count]. */
  yes: Array<[string, string]>;
  no: Array<[string, string]>;
}

/** What one order of a batch placement came to: the order placed, or the error that refused it (a DomainError when a rule did). */
export type PlacementOutcome = { order: OrderView } | { error: unknown };

export interface CursorPage {
  ticker?: string;
  limit: number;
  cursor?: string;
}

/**
 * The trading service (service.ts implements it; `services.trading`). Every failure is a DomainError:
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
}

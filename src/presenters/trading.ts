import type {
  BalanceView,
  BatchCancelItem,
  FeeBreakdown,
  FillView,
  OrderbookView,
  OrderView,
  PositionView,
  PreviewView,
  SettlementView,
  TradeView,
} from '../domain/trading/types.js';
import type { DomainError } from '../domain/errors.js';
import type { components } from '../generated/api-types.js';
import { STATUS_BY_CODE } from '../http/errors.js';

type Schemas = components['schemas'];

/**
 * Wire shapes of trading (specification 2.1, 2.2; DESIGN.md "Trading"). The domain's views are already
 * wire-shaped (snake_case, decimal strings, `Z` timestamps); these copy exactly the documented fields, so
 * that a field added to a view never leaks into a response the document declares closed.
 */

/** The order record as listed and as placed: with the builder fields. */
export const presentOrder = (order: OrderView): Schemas['Order'] => ({
  order_id: order.order_id,
  market_id: order.market_id,
  ticker: order.ticker,
  side: order.side,
  action: order.action,
  type: order.type,
  time_in_force: order.time_in_force,
  price: order.price,
  count: order.count,
  fill_count: order.fill_count,
  remaining_count: order.remaining_count,
  status: order.status,
  client_order_id: order.client_order_id,
  builder_code: order.builder_code,
  builder_maker_fee_bps: order.builder_maker_fee_bps,
  builder_taker_fee_bps: order.builder_taker_fee_bps,
  expiration_ts: order.expiration_ts,
  post_only: order.post_only,
  reduce_only: order.reduce_only,
  created_at: order.created_at,
  updated_at: order.updated_at,
});

/** The single-order read: the same record without the builder fields (specification 2.1). */
export const presentOrderDetail = (order: OrderView): Schemas['OrderDetail'] => {
  const { builder_code: _code, builder_maker_fee_bps: _maker, builder_taker_fee_bps: _taker, ...detail } = presentOrder(order);
  return detail;
};

const presentFees = (fees: FeeBreakdown): Schemas['FeeBreakdown'] => ({
  role: fees.role,
  platform_fee_bps: fees.platform_fee_bps,
  builder_fee_bps: fees.builder_fee_bps,
  platform_fee: fees.platform_fee,
  builder_fee: fees.builder_fee,
  total_fee: fees.total_fee,
  cash_required: fees.cash_required,
  net_proceeds: fees.net_proceeds,
});

export const presentPreview = (preview: PreviewView): Schemas['OrderPreview'] => ({
  market_id: preview.market_id,
  ticker: preview.ticker,
  side: preview.side,
  action: preview.action,
  price: preview.price,
  count: preview.count,
  notional: preview.notional,
  reserve_required: preview.reserve_required,
  available_balance: preview.available_balance,
  sufficient_balance: preview.sufficient_balance,
  position_available: preview.position_available,
  sufficient_position: preview.sufficient_position,
  platform_taker_fee_bps: preview.platform_taker_fee_bps,
  platform_maker_fee_bps: preview.platform_maker_fee_bps,
  builder_code: preview.builder_code,
  builder_maker_fee_bps: preview.builder_maker_fee_bps,
  builder_taker_fee_bps: preview.builder_taker_fee_bps,
  maker: presentFees(preview.maker),
  taker: presentFees(preview.taker),
});

export const presentBatchCancelItem = (item: BatchCancelItem): Schemas['CancelledOrderItem'] | Schemas['FailedOrderItem'] =>
  'error' in item ? { order_id: item.order_id, error: item.error } : { order_id: item.order_id, status: item.status };

/** A batch placement's outcome whose error, if any, is a rule's refusal. */
export type PresentableOutcome = { order: OrderView } | { error: DomainError };

/** One order of a batch placement: placed, or refused with the error (and status) it would have been answered alone. */
export const presentPlacedOrderItem = (outcome: PresentableOutcome, sentClientOrderId: string | undefined): Schemas['PlacedOrderItem'] => {
  if ('order' in outcome) return { client_order_id: outcome.order.client_order_id, order: presentOrder(outcome.order), error: null };
  const { code, message, details } = outcome.error;
  const error: Schemas['PlacementError'] = { code, message, status: STATUS_BY_CODE[code] };
  if (details && details.length > 0) error.details = details;
  return { ...(sentClientOrderId === undefined ? {} : { client_order_id: sentClientOrderId }), order: null, error };
};

export const presentBalance = (balance: BalanceView): Schemas['Balance'] => ({
  balance: balance.balance,
  reserved: balance.reserved,
  available: balance.available,
});

export const presentPosition = (position: PositionView): Schemas['Position'] => ({
  market_id: position.market_id,
  ticker: position.ticker,
  side: position.side,
  count: position.count,
  available: position.available,
  updated_at: position.updated_at,
});

export const presentFill = (fill: FillView): Schemas['Fill'] => ({
  fill_id: fill.fill_id,
  order_id: fill.order_id,
  market_id: fill.market_id,
  ticker: fill.ticker,
  side: fill.side,
  action: fill.action,
  price: fill.price,
  count: fill.count,
  role: fill.role,
  created_at: fill.created_at,
});

export const presentSettlement = (settlement: SettlementView): Schemas['Settlement'] => ({
  settlement_id: settlement.settlement_id,
  market_id: settlement.market_id,
  ticker: settlement.ticker,
  result: settlement.result,
  yes_count: settlement.yes_count,
  no_count: settlement.no_count,
  payout: settlement.payout,
  created_at: settlement.created_at,
});

export const presentTrade = (trade: TradeView): Schemas['Trade'] => ({
  trade_id: trade.trade_id,
  market_id: trade.market_id,
  ticker: trade.ticker,
  yes_price: trade.yes_price,
  no_price: trade.no_price,
  count: trade.count,
  taker_side: trade.taker_side,
  created_at: trade.created_at,
});

export const presentOrderbook = (book: OrderbookView): Schemas['Orderbook'] => ({
  yes: book.yes.map(([price, count]) => [price, count]),
  no: book.no.map(([price, count]) => [price, count]),
});

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
} from '../domain/trading/views.js';
import type { DomainError } from '../domain/errors.js';
import type { Candle, QuoteRange } from '../domain/trading/candles.js';
import type { components } from '../generated/api-types.js';
import { STATUS_BY_CODE } from './errors.js';

type Schemas = components['schemas'];

/**
 * Trading's responses. The domain's views (src/domain/trading/views.ts) are already wire-shaped, so most
 * pass through as they are; their types make sure each is exactly its documented schema, so that a field
 * added to a view never leaks into a response the document declares closed.
 */

/**
 * `View` when it has exactly the fields of `Schema`: every one (the constraint) and none more (otherwise
 * `never`, which no view is, so passing one fails to compile).
 */
type Exactly<View extends Schema, Schema> = Exclude<keyof View, keyof Schema> extends never ? View : never;

/** The order record as listed and as placed: with the builder fields. */
export const presentOrder = (order: Exactly<OrderView, Schemas['Order']>): Schemas['Order'] => order;

/** The single-order read: the same record without the builder fields. */
export const presentOrderDetail = (order: OrderView): Schemas['OrderDetail'] => {
  const { builder_code: _code, builder_maker_fee_bps: _maker, builder_taker_fee_bps: _taker, ...detail } = presentOrder(order);
  return detail;
};

export const presentPreview = (
  preview: Exactly<PreviewView, Schemas['OrderPreview']> & { maker: Exactly<FeeBreakdown, Schemas['FeeBreakdown']>; taker: Exactly<FeeBreakdown, Schemas['FeeBreakdown']> },
): Schemas['OrderPreview'] => preview;

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

export const presentBalance = (balance: Exactly<BalanceView, Schemas['Balance']>): Schemas['Balance'] => balance;

export const presentPosition = (position: Exactly<PositionView, Schemas['Position']>): Schemas['Position'] => position;

export const presentFill = (fill: Exactly<FillView, Schemas['Fill']>): Schemas['Fill'] => fill;

export const presentSettlement = (settlement: Exactly<SettlementView, Schemas['Settlement']>): Schemas['Settlement'] => settlement;

export const presentTrade = (trade: Exactly<TradeView, Schemas['Trade']>): Schemas['Trade'] => trade;

export const presentOrderbook = (book: Exactly<OrderbookView, Schemas['Orderbook']>): Schemas['Orderbook'] => book;

/** A candle in Kalshi's shape: prices as `*_dollars`, counts as `*_fp`. */
export function presentCandle(candle: Candle): Schemas['MarketCandlestick'] {
  const quote = (q: QuoteRange): Schemas['CandleQuote'] => ({ open_dollars: q.open, low_dollars: q.low, high_dollars: q.high, close_dollars: q.close });
  const price: Schemas['CandlePrice'] = {};
  if (candle.price) {
    Object.assign(price, {
      open_dollars: candle.price.open,
      low_dollars: candle.price.low,
      high_dollars: candle.price.high,
      close_dollars: candle.price.close,
      mean_dollars: candle.price.mean,
    });
  }
  if (candle.previous !== undefined) price.previous_dollars = candle.previous;
  return {
    end_period_ts: candle.end,
    yes_bid: quote(candle.yesBid),
    yes_ask: quote(candle.yesAsk),
    price,
    volume_fp: candle.volume,
    open_interest_fp: candle.openInterest,
  };
}

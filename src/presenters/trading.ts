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

/**
 * Candles in Kalshi's shape (`MarketCandlestick`: prices as `*_dollars`, counts as `*_fp`), written straight
 * as JSON text: a day of minutes is 1,440 candles, and building an object per candle for JSON.stringify took
 * most of such a request's time. Every value is a number or a decimal string, which need no escaping.
 */
export function candlesJson(candles: readonly Candle[]): string {
  const quote = (q: QuoteRange) => `{"open_dollars":"${q.open}","low_dollars":"${q.low}","high_dollars":"${q.high}","close_dollars":"${q.close}"}`;
  let text = '[';
  for (const candle of candles) {
    const { price, previous } = candle;
    const traded = price ? `"open_dollars":"${price.open}","low_dollars":"${price.low}","high_dollars":"${price.high}","close_dollars":"${price.close}","mean_dollars":"${price.mean}"` : '';
    const before = previous === undefined ? '' : `${price ? ',' : ''}"previous_dollars":"${previous}"`;
    text +=
      `${text.length > 1 ? ',' : ''}{"end_period_ts":${candle.end},"yes_bid":${quote(candle.yesBid)},"yes_ask":${quote(candle.yesAsk)},` +
      `"price":{${traded}${before}},"volume_fp":"${candle.volume}","open_interest_fp":"${candle.openInterest}"}`;
  }
  return `${text}]`;
}

/**
 * A reply body already written as JSON text, typed as the schema it encodes: the dispatcher sends its bytes as
 * they are, under the Content-Type the reply names (bytes, not the string: Koa would measure a string's UTF-8
 * length, then Node encode it again).
 */
const jsonText = <Body>(text: string) => ({ body: Buffer.from(text) as unknown as Body, headers: { 'Content-Type': 'application/json' } });

/** One market's candlesticks (`MarketCandlesticks`), as a reply body of JSON text. */
export const presentMarketCandlesticks = (ticker: string, candles: readonly Candle[]) =>
  jsonText<Schemas['MarketCandlesticks']>(`{"ticker":${JSON.stringify(ticker)},"candlesticks":${candlesJson(candles)}}`);

/** Several markets' candlesticks (`MarketCandlesticksBatch`), as a reply body of JSON text. */
export const presentMarketsCandlesticks = (markets: ReadonlyArray<{ ticker: string; candles: readonly Candle[] }>) =>
  jsonText<Schemas['MarketCandlesticksBatch']>(`{"markets":[${markets.map((m) => `{"market_ticker":${JSON.stringify(m.ticker)},"candlesticks":${candlesJson(m.candles)}}`).join(',')}]}`);

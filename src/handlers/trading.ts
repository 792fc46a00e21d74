import type { Account } from '../domain/accounts/service.js';
import { DomainError, invalid, unauthorized } from '../domain/errors.js';
import type { OrderStatus } from '../db/tables.js';
import type { CursorPage, PlacementOutcome, PlaceOrderInput } from '../domain/trading/types.js';
import type { components } from '../generated/api-types.js';
import { bodyCheckOf } from './body-check.js';
import type { Handler } from './types.js';
import {
  presentBatchCancelItem,
  presentMarketCandlesticks,
  presentMarketsCandlesticks,
  presentPlacedOrderItem,
  type PresentableOutcome,
  presentOrder,
  presentOrderbook,
  presentOrderDetail,
  presentPreview,
  presentTrade,
} from '../presenters/trading.js';

/**
 * Orders and public market data. The dispatcher has authenticated
 * the caller, validated and coerced the request (defaults filled in, page sizes clamped); the trading
 * service does the rest and reports failures as DomainErrors.
 */

/** The authenticated caller: every order operation has a security requirement, so it is always set. */
export function callerId(account: Account | undefined): string {
  if (!account) throw unauthorized();
  return account.id;
}

/** The documented default page size; the validator fills it in, so this only covers the type. */
const DEFAULT_PAGE_SIZE = 20;

/** A cursor collection's page request (`ticker`, `limit` already clamped by the dispatcher, `cursor`). */
export const pageOf = (query: { ticker?: string; limit?: number; cursor?: string }): CursorPage => ({
  ticker: query.ticker,
  limit: query.limit ?? DEFAULT_PAGE_SIZE,
  cursor: query.cursor,
});

/** A placement's body as the service takes it: Unix seconds arrive as a JSON integer, read from their decimal text. */
function placementInput(body: components['schemas']['PlaceOrderRequest']): PlaceOrderInput {
  const { expiration_ts: expiration, ...terms } = body;
  const input: PlaceOrderInput = terms;
  if (expiration !== undefined) input.expiration_ts = String(expiration);
  return input;
}

export const placeOrder: Handler<'placeOrder'> = async ({ body, account }, { services }) => ({
  status: 201,
  body: { order: presentOrder(await services.trading.placeOrder(callerId(account), placementInput(body))) },
});

/** Each order of a batch checked as the body of a single placement (the dispatcher checked only the batch's shape). */
const placementProblems = bodyCheckOf('placeOrder');

export const placeOrderBatch: Handler<'placeOrderBatch'> = async ({ body, account }, { services }) => {
  const accountId = callerId(account);
  const checked = body.orders.map((item) => {
    const problem = placementProblems(item);
    return problem ? { item, error: invalid(problem.message, problem.details) } : { item, input: placementInput(item as components['schemas']['PlaceOrderRequest']) };
  });
  const inputs = checked.flatMap((c) => (c.input ? [c.input] : []));
  const placed = inputs.length > 0 ? await services.trading.placeOrders(accountId, inputs) : [];
  let next = 0;
  const outcomes = checked.map((c): PlacementOutcome => (c.input ? placed[next++]! : { error: c.error }));
  // A failure of the service itself (not a rule) is the request's, as for a single placement: 500.
  const failure = outcomes.find((o) => !isPresentable(o));
  if (failure && 'error' in failure) throw failure.error;
  const presentable = outcomes.filter(isPresentable);
  return { status: 201, body: { orders: presentable.map((outcome, i) => presentPlacedOrderItem(outcome, clientOrderIdOf(checked[i]!.item))) } };
};

/** An order placed, or refused by a rule (a DomainError). */
const isPresentable = (outcome: PlacementOutcome): outcome is PresentableOutcome => !('error' in outcome) || outcome.error instanceof DomainError;

/** The client_order_id an order of a batch was sent with, when it is a string. */
function clientOrderIdOf(item: object): string | undefined {
  const id = (item as { client_order_id?: unknown }).client_order_id;
  return typeof id === 'string' ? id : undefined;
}

export const previewOrder: Handler<'previewOrder'> = async ({ body, account }, { services }) => ({
  status: 200,
  body: presentPreview(await services.trading.previewOrder(callerId(account), body)),
});

export const listOrders: Handler<'listOrders'> = async ({ query, account }, { services }) => {
  // `status` arrives as an array (one value, a comma-separated set, or repeated), each value validated.
  const status: OrderStatus[] | undefined = query.status ? [...new Set(query.status)] : undefined;
  const page = await services.trading.listOrders(callerId(account), {
    ticker: query.ticker,
    market: query.market,
    status,
    limit: query.limit ?? DEFAULT_PAGE_SIZE,
    cursor: query.cursor,
  });
  return { status: 200, body: { cursor: page.cursor, orders: page.orders.map(presentOrder) } };
};

export const getOrder: Handler<'getOrder'> = async ({ params, account }, { services }) => ({
  status: 200,
  body: presentOrderDetail(await services.trading.getOrder(callerId(account), params.order_id)),
});

export const cancelOrder: Handler<'cancelOrder'> = async ({ params, account }, { services }) => {
  await services.trading.cancelOrder(callerId(account), params.order_id);
  return { status: 200, body: { status: 'cancelled' } };
};

export const cancelAllOrders: Handler<'cancelAllOrders'> = async ({ query, account }, { services }) => {
  const { cancelled, market_id } = await services.trading.cancelAllOrders(callerId(account), {
    market: query.market,
    ticker: query.ticker,
  });
  return { status: 200, body: { status: 'cancelled', cancelled, market_id } };
};

/**
 * A JSON number as the decimal string the service takes. JavaScript prints the shortest text that reads
 * back as the same double (5.5 -> '5.5', 0.0001 -> '0.0001'); tiny or huge values print with an exponent
 * ('1e-7'), which the service rejects as off the quantum like any other malformed count.
 */
const decimalText = (count: string | number): string => (typeof count === 'number' ? String(count) : count);

export const decreaseOrder: Handler<'decreaseOrder'> = async ({ params, body, account }, { services }) => {
  await services.trading.decreaseOrder(callerId(account), params.order_id, decimalText(body.count));
  return { status: 200, body: { status: 'decreased' } };
};

/** Also serves POST /api/portfolio/orders/cancel and DELETE /api/clob/orders (x-handler aliases). */
export const cancelOrderBatch: Handler<'cancelOrderBatch'> = async ({ body, account }, { services }) => {
  const results = await services.trading.cancelOrders(callerId(account), body.order_ids);
  return { status: 200, body: { results: results.map(presentBatchCancelItem) } };
};

/** One order, as order-book clients cancel it (`DELETE /api/clob/order {orderID}`), answered in their shape. */
export const cancelClobOrder: Handler<'cancelClobOrder'> = async ({ body, account }, { services }) => {
  const [result] = await services.trading.cancelOrders(callerId(account), [body.orderID]);
  const id = body.orderID;
  return { status: 200, body: result && 'error' in result ? { canceled: [], not_canceled: { [id]: result.error } } : { canceled: [id], not_canceled: {} } };
};

// --- public market data ---

export const listTrades: Handler<'listTrades'> = async ({ query }, { services }) => {
  const page = await services.trading.listTrades(pageOf(query));
  return { status: 200, body: { cursor: page.cursor, trades: page.trades.map(presentTrade) } };
};

export const getMarketOrderbook: Handler<'getMarketOrderbook'> = async ({ params }, { services }) => ({
  status: 200,
  body: { orderbook: presentOrderbook(await services.trading.getOrderbook(params.ticker)) },
});

/** start_ts, end_ts and period_interval as the trading service takes them. */
const candleRequest = (query: { start_ts: number; end_ts: number; period_interval: number }) => ({ start: query.start_ts, end: query.end_ts, period: query.period_interval });

export const getMarketCandlesticks: Handler<'getMarketCandlesticks'> = async ({ params, query }, { services }) => {
  const { ticker, candles } = await services.trading.getMarketCandles(params.series_ticker, params.ticker, candleRequest(query));
  return { status: 200, ...presentMarketCandlesticks(ticker, candles) };
};

export const getMarketsCandlesticks: Handler<'getMarketsCandlesticks'> = async ({ query }, { services }) => {
  const markets = await services.trading.getMarketsCandles(query.market_tickers, candleRequest(query));
  return { status: 200, ...presentMarketsCandlesticks(markets) };
};

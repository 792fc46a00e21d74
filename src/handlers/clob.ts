import type { ClobCaller } from '../domain/clob/service.js';
import { cancelAnswer, TICK_SIZE } from '../domain/clob/views.js';
import type { ApiRequest, Handler } from './types.js';
import { callerId } from './trading.js';

/**
 * The order-book (CLOB) client's paths under /api/clob: market data by outcome token, the caller's orders and
 * trades, cancels and signed placement, in the client's shapes (src/domain/clob/).
 */

// --- market data (public)

export const getClobBook: Handler<'getClobBook'> = async ({ query }, { services }) => ({ status: 200, body: await services.clob.getBook(query.token_id) });

export const getClobBooks: Handler<'getClobBooks'> = async ({ body }, { services }) => ({
  status: 200,
  body: await services.clob.getBooks(body.map((item) => item.token_id)),
});

export const getClobMidpoint: Handler<'getClobMidpoint'> = async ({ query }, { services }) => ({ status: 200, body: await services.clob.getMidpoint(query.token_id) });

export const getClobMidpoints: Handler<'getClobMidpoints'> = async ({ body }, { services }) => ({
  status: 200,
  body: await services.clob.getMidpoints(body.map((item) => item.token_id)),
});

export const getClobSpread: Handler<'getClobSpread'> = async ({ query }, { services }) => ({ status: 200, body: await services.clob.getSpread(query.token_id) });

export const getClobSpreads: Handler<'getClobSpreads'> = async ({ body }, { services }) => ({
  status: 200,
  body: await services.clob.getSpreads(body.map((item) => item.token_id)),
});

export const getClobPrice: Handler<'getClobPrice'> = async ({ query }, { services }) => ({ status: 200, body: await services.clob.getPrice(query.token_id, query.side) });

export const getClobPrices: Handler<'getClobPrices'> = async ({ body }, { services }) => ({ status: 200, body: await services.clob.getPrices(body) });

export const getClobLastTradePrice: Handler<'getClobLastTradePrice'> = async ({ query }, { services }) => ({
  status: 200,
  body: await services.clob.getLastTradePrice(query.token_id),
});

export const getClobLastTradesPrices: Handler<'getClobLastTradesPrices'> = async ({ body }, { services }) => ({
  status: 200,
  body: await services.clob.getLastTradesPrices(body.map((item) => item.token_id)),
});

export const getClobTickSize: Handler<'getClobTickSize'> = async ({ query }, { services }) => {
  await services.clob.marketOfToken(query.token_id);
  return { status: 200, body: { minimum_tick_size: Number(TICK_SIZE) as 0.01 } };
};

export const getClobPricesHistory: Handler<'getClobPricesHistory'> = async ({ query }, { services }) => ({
  status: 200,
  body: await services.clob.getPricesHistory(query.market, query),
});

export const getClobNegRisk: Handler<'getClobNegRisk'> = async ({ query }, { services }) => ({ status: 200, body: await services.clob.getNegRisk(query.token_id) });

export const getClobFeeRate: Handler<'getClobFeeRate'> = async ({ query }, { services }) => {
  await services.clob.marketOfToken(query.token_id);
  return { status: 200, body: { base_fee: 0 } };
};

export const getClobTime: Handler<'getClobTime'> = () => Promise.resolve({ status: 200, body: Math.floor(Date.now() / 1000) });

export const listClobMarkets: Handler<'listClobMarkets'> = async ({ query }, { services }) => ({ status: 200, body: await services.clob.listMarkets(query.next_cursor) });

export const getClobMarket: Handler<'getClobMarket'> = async ({ params }, { services }) => ({ status: 200, body: await services.clob.getMarket(params.condition_id) });

// --- the caller's orders and trades

export const listClobOpenOrders: Handler<'listClobOpenOrders'> = async ({ query, account }, { services }) => ({
  status: 200,
  body: await services.clob.listOpenOrders(callerId(account), query),
});

export const getClobOrder: Handler<'getClobOrder'> = async ({ params, account }, { services }) => ({
  status: 200,
  body: await services.clob.getOrder(callerId(account), params.id),
});

export const listClobTrades: Handler<'listClobTrades'> = async ({ query, account }, { services }) => ({
  status: 200,
  body: await services.clob.listTrades(callerId(account), query),
});

export const cancelAllClobOrders: Handler<'cancelAllClobOrders'> = async ({ account }, { services }) => ({
  status: 200,
  body: await services.clob.cancelLive(callerId(account)),
});

export const cancelClobMarketOrders: Handler<'cancelClobMarketOrders'> = async ({ body, account }, { services }) => ({
  status: 200,
  body: await services.clob.cancelLive(callerId(account), body),
});

/** The client's bare array of ids, or `{order_ids}`. */
export const cancelClobOrders: Handler<'cancelClobOrders'> = async ({ body, account }, { services }) => {
  const ids = Array.isArray(body) ? body : body.order_ids;
  const results = await services.trading.cancelOrders(callerId(account), ids);
  return { status: 200, body: { results, ...cancelAnswer(results) } };
};

// --- signed placement

/** The account, and the address of the order-book key that signed the request (if one did). */
const clobCaller = ({ account, apiKey }: Pick<ApiRequest<'placeClobOrder'>, 'account' | 'apiKey'>): ClobCaller => ({ accountId: callerId(account), keyAddress: apiKey?.address });

export const placeClobOrder: Handler<'placeClobOrder'> = async (request, { services }) => {
  const [answer] = await services.clob.placeSignedOrders(clobCaller(request), [request.body], true);
  return { status: 201, body: answer! };
};

export const placeClobOrders: Handler<'placeClobOrders'> = async (request, { services }) => ({
  status: 201,
  body: await services.clob.placeSignedOrders(clobCaller(request), request.body),
});

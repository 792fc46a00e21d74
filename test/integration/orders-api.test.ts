/* eslint max-lines: ["error", { "max": 450, "skipBlankLines": true, "skipComments": true }] -- its cases share one running service (an embedded PostgreSQL) and its fixtures: a split would start another */
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MarketFactory } from '../support/markets.js';
import { TestService, type ApiResponse } from '../support/service.js';

/**
 * The order endpoints over HTTP: placement, preview, reads,
 * cancels, decreases, batch cancel and its aliases, and the list with its filters and cursor. Every
 * response is validated against the OpenAPI document by TestService.
 */

const ADMIN = { email: 'orders-admin@dots.local', password: 'orders-password' };
const ZERO_CODE = `0x${'0'.repeat(64)}`;

let api: TestService;
let marketFactory: MarketFactory;
let admin: string;

beforeAll(async () => {
  api = await TestService.start({ ADMIN_EMAIL: ADMIN.email, ADMIN_PASSWORD: ADMIN.password });
  marketFactory = await MarketFactory.create(api, ADMIN, 'ORDS');
  admin = marketFactory.adminToken;
});
afterAll(() => api.stop());

/** A new ACTIVE market. */
const newMarket = () => marketFactory.newMarket();

const account = async (): Promise<string> => (await api.account()).token;
const place = (token: string | undefined, body: unknown): Promise<ApiResponse> => api.post('/api/portfolio/orders', body, { token });

async function order(token: string, body: Record<string, unknown>): Promise<Record<string, any>> {
  const response = await place(token, body);
  if (response.status !== 201) throw new Error(`placing ${JSON.stringify(body)}: ${response.status} ${JSON.stringify(response.body)}`);
  return response.body.order;
}

const read = (path: string, token?: string) => api.read(path, token);

const balance = (token: string) => read('/api/portfolio/balance', token);
const getOrder = (token: string, id: string) => api.get(`/api/portfolio/orders/${id}`, { token });
const cancel = (token: string, id: string) => api.delete(`/api/portfolio/orders/${id}`, { token });
const decrease = (token: string, id: string, count: unknown) => api.post(`/api/portfolio/orders/${id}/decrease`, { count }, { token });
const batch = (method: string, path: string, token: string, body: unknown) => api.request(method, path, { token, body });

const walk = (path: string, key: string, token?: string) => api.walk(path, key, token);

describe('POST /api/portfolio/orders', () => {
  it('places a resting limit order with the documented defaults and reserves price x count', async () => {
    const { ticker, id } = await newMarket();
    const trader = await account();
    const response = await place(trader, { ticker, side: 'yes', count: '10', price: '0.45' });
    expect(response.status).toBe(201);
    const placed = response.body.order;
    expect(placed).toMatchObject({
      market_id: id,
      ticker,
      side: 'yes',
      action: 'buy',
      type: 'LIMIT',
      time_in_force: 'GTC',
      price: '0.45',
      count: '10',
      fill_count: '0',
      remaining_count: '10',
      status: 'OPEN',
      builder_code: ZERO_CODE,
      builder_maker_fee_bps: 0,
      builder_taker_fee_bps: 0,
      expiration_ts: null,
      post_only: false,
      reduce_only: false,
    });
    // No client_order_id sent: the service generates a UUID.
    expect(placed.client_order_id).toMatch(/^[0-9a-f-]{36}$/);
    expect(placed.created_at).toMatch(/Z$/);
    expect(await balance(trader)).toEqual({ balance: '1000.00', reserved: '4.50', available: '995.50' });
  });

  it('takes bid/ask as YES/NO, lower-case tickers, a client id, a builder code, an expiry and Unix seconds', async () => {
    const { ticker } = await newMarket();
    const trader = await account();
    const code = `0x${'ab'.repeat(32)}`;
    const bid = await order(trader, { ticker: ticker.toLowerCase(), side: 'bid', count: '1.5', price: '0.2', client_order_id: 'bot-1', builder_code: code, expiration_ts: '2030-01-01T00:00:00+02:00' });
    expect(bid).toMatchObject({ ticker, side: 'yes', price: '0.20', count: '1.5', client_order_id: 'bot-1', builder_code: code, expiration_ts: '2029-12-31T22:00:00.000Z' });
    const ask = await order(trader, { ticker, side: 'ask', count: '2', price: '0.30', expiration_ts: 1893456000 });
    expect(ask).toMatchObject({ side: 'no', price: '0.30', expiration_ts: '2030-01-01T00:00:00.000Z' });
  });

  it.each([
    ['a price below the range', { price: '0.00' }],
    ['a price of 1', { price: '1.00' }],
    ['a price off the tick', { price: '0.455' }],
    ['a price as a number', { price: 0.45 }],
    ['a zero count', { count: '0' }],
    ['a count off the quantum', { count: '1.00001' }],
    ['a negative count', { count: '-1' }],
    ['an unknown side', { side: 'up' }],
    ['an unknown action', { action: 'short' }],
    ['a market order', { type: 'MARKET' }],
    ['an unknown time in force', { time_in_force: 'DAY' }],
    ['a malformed builder code', { builder_code: '0x1234' }],
    ['an expiry in the past', { expiration_ts: '2020-01-01T00:00:00Z' }],
    ['a malformed expiry', { expiration_ts: 'tomorrow' }],
    ['a reduce-only buy', { reduce_only: true }],
    ['a non-zero fee rate', { fee_rate_bps: '5' }],
    ['a non-zero fee', { builder_taker_fee_bps: 25 }],
    ['an unknown field', { leverage: 10 }],
    ['a client id with a space', { client_order_id: 'my order' }],
  ])('refuses %s with 400 and places nothing', async (_name, change) => {
    const { ticker } = await newMarket();
    const trader = await account();
    const response = await place(trader, { ticker, side: 'yes', count: '1', price: '0.45', ...change });
    expect(response.status).toBe(400);
    expect(response.body.error.code).toBe('invalid_request');
    expect((await read('/api/portfolio/orders', trader)).orders).toEqual([]);
    expect(await balance(trader)).toMatchObject({ reserved: '0.00' });
  });

  it('refuses a buy the available balance does not cover, and a sell without shares (no naked shorts)', async () => {
    const { ticker } = await newMarket();
    const trader = await account();
    const tooBig = await place(trader, { ticker, side: 'yes', count: '2000', price: '0.60' });
    expect(tooBig.status).toBe(400);
    expect(tooBig.body.error.message).toMatch(/insufficient balance/);
    const naked = await place(trader, { ticker, side: 'yes', action: 'sell', count: '1', price: '0.60' });
    expect(naked.status).toBe(400);
    expect(naked.body.error.message).toMatch(/insufficient position/);
    expect(await balance(trader)).toEqual({ balance: '1000.00', reserved: '0.00', available: '1000.00' });
  });

  it('refuses a post-only order that would trade on arrival, and fills or kills FOK and IOC', async () => {
    const { ticker } = await newMarket();
    const maker = await account();
    const taker = await account();
    await order(maker, { ticker, side: 'no', count: '5', price: '0.50' }); // a YES ask at 0.50
    const postOnly = await place(taker, { ticker, side: 'yes', count: '1', price: '0.55', post_only: true });
    expect(postOnly.status).toBe(400);

    const fok = await order(taker, { ticker, side: 'yes', count: '6', price: '0.50', time_in_force: 'FOK' });
    expect(fok).toMatchObject({ status: 'CANCELLED', count: '6', fill_count: '0', remaining_count: '0' });
    const ioc = await order(taker, { ticker, side: 'yes', count: '6', price: '0.50', time_in_force: 'IOC' });
    expect(ioc).toMatchObject({ status: 'CANCELLED', count: '6', fill_count: '5', remaining_count: '0' });
    // IOC and FOK remainders release their reserve: 5 contracts bought at 0.50.
    expect(await balance(taker)).toEqual({ balance: '997.50', reserved: '0.00', available: '997.50' });
  });

  it('answers 404 for an unknown market and 409 for a market that is not ACTIVE or a repeated client_order_id', async () => {
    const trader = await account();
    const unknown = await place(trader, { ticker: 'NO-SUCH-MARKET', side: 'yes', count: '1', price: '0.45' });
    expect(unknown.status).toBe(404);
    expect(unknown.body.error.code).toBe('not_found');

    const { ticker } = await newMarket();
    const first = await place(trader, { ticker, side: 'yes', count: '1', price: '0.45', client_order_id: 'dup-1' });
    expect(first.status).toBe(201);
    const again = await place(trader, { ticker, side: 'no', count: '2', price: '0.10', client_order_id: 'dup-1' });
    expect(again.status).toBe(409);
    expect(again.body.error.code).toBe('conflict');
    // Another account may use the same client id.
    expect((await place(await account(), { ticker, side: 'yes', count: '1', price: '0.45', client_order_id: 'dup-1' })).status).toBe(201);

    const closed = await newMarket();
    await api.post(`/api/admin/markets/${closed.ticker}/close`, undefined, { token: admin });
    expect((await place(trader, { ticker: closed.ticker, side: 'yes', count: '1', price: '0.45' })).status).toBe(409);
  });

  it('needs a token, refuses a body over 512 KiB and malformed JSON', async () => {
    const { ticker } = await newMarket();
    expect((await place(undefined, { ticker, side: 'yes', count: '1', price: '0.45' })).status).toBe(401);
    const trader = await account();
    const huge = await api.request('POST', '/api/portfolio/orders', { token: trader, rawBody: JSON.stringify({ ticker, padding: 'x'.repeat(600 * 1024) }) });
    expect(huge.status).toBe(413);
    const malformed = await api.request('POST', '/api/portfolio/orders', { token: trader, rawBody: '{"ticker": ' });
    expect(malformed.status).toBe(400);
  });
});

describe('POST /api/portfolio/orders/preview', () => {
  it('previews a buy: notional, reserve and balance, no position fields, nothing reserved', async () => {
    const { ticker, id } = await newMarket();
    const trader = await account();
    const response = await api.post('/api/portfolio/orders/preview', { ticker, side: 'bid', count: '10', price: '0.45' }, { token: trader });
    expect(response.status).toBe(200);
    const zeroFees = { platform_fee_bps: 0, builder_fee_bps: 0, platform_fee: '0.00', builder_fee: '0.00', total_fee: '0.00' };
    expect(response.body).toEqual({
      market_id: id,
      ticker,
      side: 'YES',
      action: 'buy',
      price: '0.45',
      count: '10',
      notional: '4.50',
      reserve_required: '4.50',
      available_balance: '1000.00',
      sufficient_balance: true,
      position_available: null,
      sufficient_position: null,
      platform_taker_fee_bps: 0,
      platform_maker_fee_bps: 0,
      builder_code: ZERO_CODE,
      builder_maker_fee_bps: 0,
      builder_taker_fee_bps: 0,
      maker: { role: 'maker', ...zeroFees, cash_required: '4.50', net_proceeds: '0.00' },
      taker: { role: 'taker', ...zeroFees, cash_required: '4.50', net_proceeds: '0.00' },
    });
    expect(await balance(trader)).toMatchObject({ reserved: '0.00' });

    const large = await api.post('/api/portfolio/orders/preview', { ticker, side: 'no', count: '5000', price: '0.50' }, { token: trader });
    expect(large.body).toMatchObject({ side: 'NO', notional: '2500.00', sufficient_balance: false });
  });

  it('previews a sell: no reserve, the shares held less those reserved by resting sells', async () => {
    const { ticker } = await newMarket();
    const seller = await account();
    const buyer = await account();
    // The seller gets 4 YES shares (minted against the buyer's NO), then rests a sell of 1.
    await order(seller, { ticker, side: 'yes', count: '4', price: '0.60' });
    await order(buyer, { ticker, side: 'no', count: '4', price: '0.40' });
    await order(seller, { ticker, side: 'yes', action: 'sell', count: '1', price: '0.90' });

    const preview = await api.post('/api/portfolio/orders/preview', { ticker, side: 'yes', action: 'sell', count: '3', price: '0.70', builder_code: `0x${'1'.repeat(64)}` }, { token: seller });
    expect(preview.status).toBe(200);
    expect(preview.body).toMatchObject({
      side: 'YES',
      action: 'sell',
      notional: '2.10',
      reserve_required: '0.00',
      sufficient_balance: true,
      position_available: '3',
      sufficient_position: true,
      builder_code: `0x${'1'.repeat(64)}`,
      maker: { role: 'maker', cash_required: '0.00', net_proceeds: '2.10' },
      taker: { role: 'taker', cash_required: '0.00', net_proceeds: '2.10' },
    });
    const tooMany = await api.post('/api/portfolio/orders/preview', { ticker, side: 'yes', action: 'sell', count: '3.5', price: '0.70' }, { token: seller });
    expect(tooMany.body).toMatchObject({ position_available: '3', sufficient_position: false });
    const noShares = await api.post('/api/portfolio/orders/preview', { ticker, side: 'no', action: 'sell', count: '1', price: '0.70' }, { token: seller });
    expect(noShares.body).toMatchObject({ side: 'NO', position_available: '0', sufficient_position: false });
  });

  it('answers 400, 401, 404 and 409 like placement', async () => {
    const { ticker } = await newMarket();
    const trader = await account();
    const preview = (body: unknown, token: string | undefined = trader) => api.post('/api/portfolio/orders/preview', body, { token });
    const anonymous = (body: unknown) => api.post('/api/portfolio/orders/preview', body);
    expect((await preview({ ticker, side: 'yes', count: '1', price: '0.995' })).status).toBe(400);
    expect((await preview({ ticker, side: 'yes', count: '1', price: '0.45', time_in_force: 'GTC' })).status).toBe(400);
    expect((await anonymous({ ticker, side: 'yes', count: '1', price: '0.45' })).status).toBe(401);
    expect((await preview({ ticker: 'NO-SUCH', side: 'yes', count: '1', price: '0.45' })).status).toBe(404);
    const closed = await newMarket();
    await api.post(`/api/admin/markets/${closed.ticker}/close`, undefined, { token: admin });
    expect((await preview({ ticker: closed.ticker, side: 'yes', count: '1', price: '0.45' })).status).toBe(409);
  });
});

describe('GET, DELETE /api/portfolio/orders/{order_id} and decrease', () => {
  it('reads an order without the builder fields; another account gets 404, as for an unknown id', async () => {
    const { ticker } = await newMarket();
    const owner = await account();
    const placed = await order(owner, { ticker, side: 'yes', count: '3', price: '0.33', client_order_id: 'read-me' });
    const response = await getOrder(owner, placed.order_id);
    expect(response.status).toBe(200);
    const { builder_code: _code, builder_maker_fee_bps: _maker, builder_taker_fee_bps: _taker, ...expected } = placed;
    expect(response.body).toEqual(expected);
    expect(Object.keys(response.body)).not.toContain('builder_code');

    const intruder = await account();
    const foreign = await getOrder(intruder, placed.order_id);
    expect(foreign.status).toBe(404);
    const unknown = await getOrder(owner, randomUUID());
    expect(unknown.status).toBe(404);
    expect(foreign.body.error.code).toBe(unknown.body.error.code);
    expect((await getOrder(owner, 'not-a-uuid')).status).toBe(404);
    expect((await getOrder(owner, 'x'.repeat(129))).status).toBe(400);
    expect((await api.get(`/api/portfolio/orders/${placed.order_id}`)).status).toBe(401);
  });

  it('cancels the remainder and releases the reserve; a second cancel, or a filled order, is 409', async () => {
    const { ticker } = await newMarket();
    const owner = await account();
    const other = await account();
    const resting = await order(owner, { ticker, side: 'yes', count: '10', price: '0.40' });
    // 4 of 10 trade (at the resting price 0.40), 6 stay live.
    await order(other, { ticker, side: 'no', count: '4', price: '0.60' });
    expect(await balance(owner)).toEqual({ balance: '998.40', reserved: '2.40', available: '996.00' });

    expect((await cancel(other, resting.order_id)).status).toBe(404);
    const cancelled = await cancel(owner, resting.order_id);
    expect(cancelled.status).toBe(200);
    expect(cancelled.body).toEqual({ status: 'cancelled' });
    expect((await getOrder(owner, resting.order_id)).body).toMatchObject({ status: 'CANCELLED', count: '10', fill_count: '4', remaining_count: '0' });
    expect(await balance(owner)).toEqual({ balance: '998.40', reserved: '0.00', available: '998.40' });

    const again = await cancel(owner, resting.order_id);
    expect(again.status).toBe(409);
    expect(again.body.error.code).toBe('conflict');

    const filledOrders = (await read(`/api/portfolio/orders?ticker=${ticker}&status=FILLED`, other)).orders;
    expect(filledOrders).toHaveLength(1);
    expect((await cancel(other, filledOrders[0].order_id)).status).toBe(409);
    expect((await cancel(owner, randomUUID())).status).toBe(404);
  });

  it('decreases the remaining count, keeping count, price and priority, and releasing the difference', async () => {
    const { ticker } = await newMarket();
    const owner = await account();
    const first = await order(owner, { ticker, side: 'yes', count: '10', price: '0.50' });
    const second = await order(await account(), { ticker, side: 'yes', count: '10', price: '0.50' });

    const response = await decrease(owner, first.order_id, '2.5');
    expect(response.status).toBe(200);
    expect(response.body).toEqual({ status: 'decreased' });
    expect((await getOrder(owner, first.order_id)).body).toMatchObject({ status: 'OPEN', count: '10', remaining_count: '2.5', price: '0.50' });
    expect(await balance(owner)).toEqual({ balance: '1000.00', reserved: '1.25', available: '998.75' });
    // A JSON number is accepted too.
    expect((await decrease(owner, first.order_id, 2)).status).toBe(200);
    expect(await balance(owner)).toMatchObject({ reserved: '1.00' });

    // Time priority kept: a seller of 3 trades with the first order (2 left) before the second.
    await order(await account(), { ticker, side: 'no', count: '3', price: '0.50' });
    expect((await getOrder(owner, first.order_id)).body).toMatchObject({ status: 'FILLED', count: '10', fill_count: '2', remaining_count: '0' });
    expect((await read(`/api/portfolio/orders?ticker=${ticker}`, owner)).orders[0]).toMatchObject({ order_id: first.order_id, status: 'FILLED' });
    void second;
  });

  it('refuses a decrease not smaller, zero, off the quantum or malformed (400); another account 404; not live 409', async () => {
    const { ticker } = await newMarket();
    const owner = await account();
    const placed = await order(owner, { ticker, side: 'yes', count: '5', price: '0.50' });
    for (const count of ['5', '6', '0', '-1', '2.00001', 2.00001, 0, 1e-7, 'two', '']) {
      const response = await decrease(owner, placed.order_id, count);
      expect(response.status, `count ${JSON.stringify(count)}`).toBe(400);
      expect(response.body.error.code).toBe('invalid_request');
    }
    expect((await api.post(`/api/portfolio/orders/${placed.order_id}/decrease`, { count: '1', by: '1' }, { token: owner })).status).toBe(400);
    expect((await api.post(`/api/portfolio/orders/${placed.order_id}/decrease`, {}, { token: owner })).status).toBe(400);
    expect((await getOrder(owner, placed.order_id)).body.remaining_count).toBe('5');

    expect((await decrease(await account(), placed.order_id, '1')).status).toBe(404);
    expect((await decrease(owner, randomUUID(), '1')).status).toBe(404);
    await cancel(owner, placed.order_id);
    const notLive = await decrease(owner, placed.order_id, '1');
    expect(notLive.status).toBe(409);
    expect(notLive.body.error.code).toBe('conflict');
  });
});

describe('DELETE /api/portfolio/orders (cancel all)', () => {
  it('cancels the live orders of one market (by ticker or id), or all of them with market_id ""', async () => {
    const a = await newMarket();
    const b = await newMarket();
    const owner = await account();
    const other = await account();
    for (const ticker of [a.ticker, a.ticker, b.ticker]) await order(owner, { ticker, side: 'yes', count: '1', price: '0.10' });
    await order(other, { ticker: a.ticker, side: 'yes', count: '1', price: '0.10' });

    const byTicker = await api.delete(`/api/portfolio/orders?ticker=${a.ticker.toLowerCase()}`, { token: owner });
    expect(byTicker.status).toBe(200);
    expect(byTicker.body).toEqual({ status: 'cancelled', cancelled: 2, market_id: a.id });
    expect((await api.delete(`/api/portfolio/orders?market=${a.id}`, { token: owner })).body).toEqual({ status: 'cancelled', cancelled: 0, market_id: a.id });

    const all = await api.delete('/api/portfolio/orders', { token: owner });
    expect(all.body).toEqual({ status: 'cancelled', cancelled: 1, market_id: '' });
    expect(await balance(owner)).toEqual({ balance: '1000.00', reserved: '0.00', available: '1000.00' });
    // Other accounts' orders are untouched.
    expect((await read('/api/portfolio/orders?status=OPEN', other)).orders).toHaveLength(1);
  });

  it('refuses market and ticker together (400), an unknown market (404), a malformed one (400), no token (401)', async () => {
    const { ticker, id } = await newMarket();
    const owner = await account();
    const both = await api.delete(`/api/portfolio/orders?market=${id}&ticker=${ticker}`, { token: owner });
    expect(both.status).toBe(400);
    expect(both.body.error.code).toBe('invalid_request');
    expect((await api.delete('/api/portfolio/orders?market=NO-SUCH', { token: owner })).status).toBe(404);
    expect((await api.delete('/api/portfolio/orders?ticker=NO-SUCH', { token: owner })).status).toBe(404);
    expect((await api.delete('/api/portfolio/orders?ticker=A%00B', { token: owner })).status).toBe(400);
    expect((await api.delete('/api/portfolio/orders')).status).toBe(401);
  });
});

describe('batch cancel: DELETE /api/portfolio/orders/batched and its aliases', () => {
  it.each([
    ['DELETE', '/api/portfolio/orders/batched'],
    ['POST', '/api/portfolio/orders/cancel'],
    ['DELETE', '/api/clob/orders'],
  ])('%s %s cancels each id or reports why not, in request order', async (method, path) => {
    const { ticker } = await newMarket();
    const owner = await account();
    const intruder = await account();
    const live = await order(owner, { ticker, side: 'yes', count: '2', price: '0.20' });
    const done = await order(owner, { ticker, side: 'yes', count: '2', price: '0.20' });
    await cancel(owner, done.order_id);
    const foreign = await order(intruder, { ticker, side: 'yes', count: '2', price: '0.20' });
    const unknown = randomUUID();

    const response = await batch(method, path, owner, { order_ids: [live.order_id, foreign.order_id, done.order_id, unknown, 'not-an-id', live.order_id] });
    expect(response.status).toBe(200);
    const results = response.body.results;
    expect(results.map((r: { order_id: string }) => r.order_id)).toEqual([live.order_id, foreign.order_id, done.order_id, unknown, 'not-an-id', live.order_id]);
    expect(results[0]).toEqual({ order_id: live.order_id, status: 'cancelled' });
    // Another account's order is reported exactly like an unknown one.
    expect(results[1]).toEqual({ order_id: foreign.order_id, error: results[3].error });
    expect(results[2].error).toMatch(/not live/);
    expect(results[4].error).toBe(results[3].error);
    expect(results[5].error).toMatch(/not live/);
    expect((await getOrder(intruder, foreign.order_id)).body.status).toBe('OPEN');
    expect(await balance(owner)).toMatchObject({ reserved: '0.00' });
  });

  it('refuses more than 1,000 ids, none, a bare array (but at /api/clob/orders) or unknown fields (400), a body over 512 KiB (413), no token (401)', async () => {
    const owner = await account();
    const ids = (n: number) => Array.from({ length: n }, () => randomUUID());
    for (const path of [['DELETE', '/api/portfolio/orders/batched'], ['POST', '/api/portfolio/orders/cancel'], ['DELETE', '/api/clob/orders']] as const) {
      const tooMany = await batch(path[0], path[1], owner, { order_ids: ids(1001) });
      expect(tooMany.status).toBe(400);
      expect(tooMany.body.error.code).toBe('invalid_request');
      expect((await batch(path[0], path[1], owner, { order_ids: [] })).status).toBe(400);
      // The order-book clients' path also takes their bare array of ids.
      expect((await batch(path[0], path[1], owner, ids(2))).status).toBe(path[1] === '/api/clob/orders' ? 200 : 400);
      expect((await batch(path[0], path[1], owner, { order_ids: ids(1), extra: true })).status).toBe(400);
      expect((await api.request(path[0], path[1], { token: owner, rawBody: JSON.stringify({ order_ids: ['x'.repeat(600 * 1024)] }) })).status).toBe(413);
      expect((await api.request(path[0], path[1], { body: { order_ids: ids(1) } })).status).toBe(401);
    }
    const exactly = await batch('DELETE', '/api/portfolio/orders/batched', owner, { order_ids: ids(1000) });
    expect(exactly.status).toBe(200);
    expect(exactly.body.results).toHaveLength(1000);
  });
});

describe('GET /api/portfolio/orders', () => {
  it('lists only the caller orders, newest first, filtered by ticker, market and a status set before pagination', async () => {
    const a = await newMarket();
    const b = await newMarket();
    const owner = await account();
    const counterparty = await account();
    const placed: Array<Record<string, any>> = [];
    for (let i = 0; i < 6; i += 1) placed.push(await order(owner, { ticker: a.ticker, side: 'yes', count: '2', price: `0.${10 + i}` }));
    for (let i = 0; i < 3; i += 1) placed.push(await order(owner, { ticker: b.ticker, side: 'no', count: '1', price: '0.10' }));
    // States in market A: two cancelled, one filled, one partly filled, two open.
    await cancel(owner, placed[0]!.order_id);
    await cancel(owner, placed[1]!.order_id);
    await order(counterparty, { ticker: a.ticker, side: 'no', count: '3', price: '0.90' }); // a YES ask at 0.10: fills 0.15 (2), then 0.14 (1)
    await order(await account(), { ticker: b.ticker, side: 'yes', count: '1', price: '0.10' }); // no trade: 0.10 + 0.10 < 1

    const all = await walk('/api/portfolio/orders?limit=4', 'orders', owner);
    expect(all.items.map((o) => o.order_id)).toEqual([...placed].reverse().map((o) => o.order_id));
    expect(all.pages).toBe(3);

    const statuses = (orders: any[]) => orders.map((o: any) => `${o.price}:${o.status}`);
    const live = await walk(`/api/portfolio/orders?ticker=${a.ticker}&status=OPEN,PARTIAL&limit=1`, 'orders', owner);
    expect(statuses(live.items)).toEqual(['0.14:PARTIAL', '0.13:OPEN', '0.12:OPEN']);
    expect(live.pages).toBe(3);
    const repeated = await read(`/api/portfolio/orders?ticker=${a.ticker}&status=FILLED&status=CANCELLED`, owner);
    expect(statuses(repeated.orders)).toEqual(['0.15:FILLED', '0.11:CANCELLED', '0.10:CANCELLED']);
    const cancelledPage = await read(`/api/portfolio/orders?status=CANCELLED&limit=2`, owner);
    expect(statuses(cancelledPage.orders)).toEqual(['0.11:CANCELLED', '0.10:CANCELLED']);
    expect(cancelledPage.cursor).toBeNull();

    expect((await read(`/api/portfolio/orders?market=${b.id}`, owner)).orders).toHaveLength(3);
    expect((await read(`/api/portfolio/orders?market=${b.ticker}&ticker=${b.ticker.toLowerCase()}`, owner)).orders).toHaveLength(3);
    expect((await read(`/api/portfolio/orders?market=${a.id}&ticker=${b.ticker}`, owner)).orders).toEqual([]);
    expect((await read('/api/portfolio/orders?ticker=NO-SUCH', owner)).orders).toEqual([]);
    expect((await read('/api/portfolio/orders', await account())).orders).toEqual([]);
  });

  it('refuses an unknown status, a malformed limit or cursor (400) and answers 401 without a token', async () => {
    const owner = await account();
    for (const query of ['status=OPEN,BOGUS', 'status=open', 'status=', 'status=OPEN&status=NOPE', 'limit=0', 'limit=ten', 'cursor=not-a-cursor', 'ticker=a%20b']) {
      const response = await api.get(`/api/portfolio/orders?${query}`, { token: owner });
      expect(response.status, query).toBe(400);
      expect(response.body.error.code).toBe('invalid_request');
    }
    expect((await api.get('/api/portfolio/orders')).status).toBe(401);
  });

  it('clamps the page size at 100 and ignores unknown query parameters', async () => {
    const { ticker } = await newMarket();
    const owner = await account();
    for (let i = 0; i < 101; i += 1) await order(owner, { ticker, side: 'yes', count: '0.01', price: '0.01' });
    const page = await read(`/api/portfolio/orders?limit=1000&unknown=1`, owner);
    expect(page.orders).toHaveLength(100);
    expect(page.cursor).not.toBeNull();
    const rest = await read(`/api/portfolio/orders?limit=1000&cursor=${encodeURIComponent(page.cursor)}`, owner);
    expect(rest.orders).toHaveLength(1);
    expect(rest.cursor).toBeNull();
    expect((await read('/api/portfolio/orders', owner)).orders).toHaveLength(20);
  });
});

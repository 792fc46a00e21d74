import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { checkTradingInvariants } from '../support/invariants.js';
import { MarketFactory } from '../support/markets.js';
import { FeedClient } from '../support/realtime.js';
import { TestService, type ApiResponse } from '../support/service.js';

/**
 * Batch placement over HTTP (POST /api/portfolio/orders/batched): each order answered in its position
 * (placed, or refused with the error its single placement would get), the request refused as a whole only
 * for a malformed batch, every placement rule across and within the batch, one transaction per batch, the
 * feed, and the order-writes budget counting orders. Every response is validated against the OpenAPI
 * document by TestService, every feed message against the AsyncAPI document by FeedClient.
 */

const ADMIN = { email: 'batch-admin@dots.local', password: 'batch-password' };
const BATCH = '/api/portfolio/orders/batched';

let api: TestService;
let markets: MarketFactory;
const feeds: FeedClient[] = [];

beforeAll(async () => {
  api = await TestService.start({ ADMIN_EMAIL: ADMIN.email, ADMIN_PASSWORD: ADMIN.password });
  markets = await MarketFactory.create(api, ADMIN, 'BAT');
});
afterEach(() => {
  for (const feed of feeds) expect(feed.problems, 'messages that do not match the AsyncAPI document').toEqual([]);
});
afterAll(async () => {
  for (const feed of feeds) feed.close();
  await api.stop();
});

const account = async () => (await api.account()).token;
const placeBatch = (token: string, orders: unknown[]): Promise<ApiResponse> => api.post(BATCH, { orders }, { token });

/** The batch's items, which must have been answered 201. */
async function batch(token: string, orders: unknown[]): Promise<Array<{ client_order_id?: string; order: any; error: any }>> {
  const response = await placeBatch(token, orders);
  if (response.status !== 201) throw new Error(`batch: ${response.status} ${JSON.stringify(response.body)}`);
  expect(response.body.orders).toHaveLength(orders.length);
  return response.body.orders;
}

async function place(token: string, body: Record<string, unknown>): Promise<any> {
  const response = await api.post('/api/portfolio/orders', body, { token });
  if (response.status !== 201) throw new Error(`placing ${JSON.stringify(body)}: ${response.status} ${JSON.stringify(response.body)}`);
  return response.body.order;
}

const ordersOf = async (token: string) => (await api.walk('/api/portfolio/orders', 'orders', token)).items;
const balance = (token: string) => api.read('/api/portfolio/balance', token);
/** Status, fill and remainder of each item (or its error's status and code). */
const summary = (items: Array<{ order: any; error: any }>) =>
  items.map((i) => (i.order ? [i.order.status, i.order.fill_count, i.order.remaining_count] : [i.error.status, i.error.code]));

describe('POST /api/portfolio/orders/batched', () => {
  it('answers every order in its position: placed, or refused with the error and status of its single placement', async () => {
    const { ticker } = await markets.newMarket();
    const closed = (await markets.newMarket()).ticker;
    await markets.close(closed);
    const trader = await account();
    const good = { ticker, side: 'yes', count: '2', price: '0.40' };
    const items = await batch(trader, [
      { ...good, client_order_id: 'first' },
      { ...good, price: '0.455' },
      { ...good, leverage: 10 },
      { ...good, ticker: 'BAT-NO-SUCH-MARKET' },
      { ...good, ticker: closed, client_order_id: 'to-closed' },
      { ...good, action: 'sell' },
      { ...good, fee_rate_bps: '5' },
      { ...good, side: 'no', price: '0.30' },
    ]);
    expect(summary(items)).toEqual([
      ['OPEN', '0', '2'],
      [400, 'invalid_request'],
      [400, 'invalid_request'],
      [404, 'not_found'],
      [409, 'conflict'],
      [400, 'invalid_request'],
      [400, 'invalid_request'],
      ['OPEN', '0', '2'],
    ]);
    // Schema problems name the field within the order, as the single placement does.
    expect(items[1]!.error.details).toEqual([expect.objectContaining({ location: 'body', path: '/price' })]);
    const single = await api.post('/api/portfolio/orders', { ...good, price: '0.455' }, { token: trader });
    expect(items[1]!.error).toEqual({ ...single.body.error, status: 400 });
    expect(items[2]!.error.message).toContain("'leverage'");
    expect(items[5]!.error.message).toContain('insufficient position');
    expect(items[6]!.error.message).toContain('fee_rate_bps must be 0');
    // client_order_id: the one sent (placed or not), the generated one of a placed order sent without one.
    expect(items.map((i) => i.client_order_id)).toEqual(['first', undefined, undefined, undefined, 'to-closed', undefined, undefined, items[7]!.order.order_id]);
    expect(items[0]!.order).toMatchObject({ ticker, side: 'yes', action: 'buy', price: '0.40', client_order_id: 'first', type: 'LIMIT', time_in_force: 'GTC' });
    // Only the two placed orders exist, and only they reserve.
    expect((await ordersOf(trader)).map((o: any) => o.order_id).sort()).toEqual([items[0]!.order.order_id, items[7]!.order.order_id].sort());
    expect(await balance(trader)).toMatchObject({ reserved: '1.40' });
  });

  it.each([
    ['no orders', { orders: [] }],
    ['21 orders', { orders: Array.from({ length: 21 }, () => ({ ticker: 'BAT-E-M1', side: 'yes', count: '1', price: '0.40' })) }],
    ['an order that is not an object', { orders: [{ ticker: 'BAT-E-M1', side: 'yes', count: '1', price: '0.40' }, 'buy'] }],
    ['no orders property', { ticker: 'BAT-E-M1', side: 'yes', count: '1', price: '0.40' }],
    ['an unknown property beside the orders', { orders: [{ ticker: 'BAT-E-M1', side: 'yes', count: '1', price: '0.40' }], atomic: true }],
    ['orders that are not an array', { orders: { ticker: 'BAT-E-M1' } }],
  ])('refuses a batch with %s as a whole (400), placing nothing', async (_name, body) => {
    const trader = await account();
    const response = await api.post(BATCH, body, { token: trader });
    expect(response.status).toBe(400);
    expect(response.body.error.code).toBe('invalid_request');
    expect(await ordersOf(trader)).toEqual([]);
  });

  it('needs a token (401)', async () => {
    const response = await api.post(BATCH, { orders: [{ ticker: 'BAT-E-M1', side: 'yes', count: '1', price: '0.40' }] });
    expect(response.status).toBe(401);
  });

  it('keeps client_order_id unique within the batch and against the account’s existing orders (409 for the later one)', async () => {
    const { ticker } = await markets.newMarket();
    const trader = await account();
    const other = await account();
    await place(trader, { ticker, side: 'yes', count: '1', price: '0.30', client_order_id: 'taken' });
    const order = (id: string) => ({ ticker, side: 'yes', count: '1', price: '0.31', client_order_id: id });
    const items = await batch(trader, [order('fresh'), order('taken'), order('fresh'), order('also-fresh')]);
    expect(summary(items)).toEqual([['OPEN', '0', '1'], [409, 'conflict'], [409, 'conflict'], ['OPEN', '0', '1']]);
    expect(items.map((i) => i.client_order_id)).toEqual(['fresh', 'taken', 'fresh', 'also-fresh']);
    expect(items[2]!.error.message).toContain("client_order_id 'fresh' is already used");
    // Another account may use the same ids.
    expect(summary(await batch(other, [order('fresh'), order('taken')]))).toEqual([['OPEN', '0', '1'], ['OPEN', '0', '1']]);
    expect((await ordersOf(trader)).length).toBe(3);
  });

  it('places 20 orders that cross one another exactly as one after another, in one transaction (self-trade prevention within the batch)', async () => {
    const [together, apart] = [await markets.newMarket(), await markets.newMarket()];
    const [a, b] = [await account(), await account()];
    // Alternately a YES bid at 0.50 and a NO buy at 0.55 (a YES ask at 0.45): each would cross the one before it.
    const orders = (ticker: string) =>
      Array.from({ length: 20 }, (_, i) => (i % 2 === 0 ? { ticker, side: 'yes', count: String(1 + (i % 3)), price: '0.50' } : { ticker, side: 'no', count: '2', price: '0.55' }));
    const items = await batch(a, orders(together.ticker));
    const sequential = [];
    for (const body of orders(apart.ticker)) sequential.push(await place(b, body));
    expect(summary(items)).toEqual(sequential.map((o) => [o.status, o.fill_count, o.remaining_count]));
    // Never a trade with itself: every earlier order met was cancelled by self-trade prevention instead.
    expect(await api.db('trades').where({ market_id: together.id }).count({ n: '*' })).toEqual([{ n: '0' }]);
    const reasons = await api.db('orders').where({ market_id: together.id }).orderBy('sequence').pluck('cancel_reason');
    expect(reasons).toEqual([...Array(19).fill('self_trade'), null]);
    expect(await api.db('orders').where({ market_id: together.id }).countDistinct({ n: 'created_at' })).toEqual([{ n: '1' }]);
    await checkTradingInvariants(api.db);
  });

  it('places 20 orders crossing another account’s book in one transaction, each filled as if alone', async () => {
    const { ticker, id } = await markets.newMarket();
    const maker = await account();
    const taker = await api.register();
    const bids = Array.from({ length: 20 }, (_, i) => ({ ticker, side: 'yes', count: '1', price: (0.3 + i / 100).toFixed(2) }));
    expect(summary(await batch(maker, bids)).every(([status]) => status === 'OPEN')).toBe(true);
    // NO buys at 0.75 sell YES down to 0.25: each meets the best bid left, 0.49 first.
    const items = await batch(taker.token, Array.from({ length: 20 }, () => ({ ticker, side: 'no', count: '1', price: '0.75' })));
    expect(summary(items)).toEqual(Array(20).fill(['FILLED', '1', '0']));
    const prices = await api.db('trades').where({ market_id: id }).orderBy('id').pluck('yes_price');
    expect(prices.map(Number)).toEqual(Array.from({ length: 20 }, (_, i) => Number((0.49 - i / 100).toFixed(2))));
    expect(await api.db('orders').where({ market_id: id, account_id: taker.user.id }).countDistinct({ n: 'created_at' })).toEqual([{ n: '1' }]);
    // The taker paid 1 - yes price per pair: 20 - sum(0.30..0.49) = 20 - 7.90.
    expect(await balance(taker.token)).toEqual({ balance: '987.90', reserved: '0.00', available: '987.90' });
    await checkTradingInvariants(api.db);
  });

  it('applies IOC, FOK and post-only to each order after the ones before it', async () => {
    const { ticker } = await markets.newMarket();
    const [maker, taker] = [await account(), await account()];
    await place(maker, { ticker, side: 'yes', count: '2', price: '0.40' });
    await place(maker, { ticker, side: 'yes', count: '1', price: '0.35' });
    const items = await batch(taker, [
      { ticker, side: 'no', count: '5', price: '0.60', time_in_force: 'FOK' }, // 3 on the book at or above 0.40 - 0.35: not fillable
      { ticker, side: 'no', count: '1', price: '0.62', post_only: true }, // would cross the 0.40 bid
      { ticker, side: 'no', count: '5', price: '0.60', time_in_force: 'IOC' }, // takes the 2 at 0.40, the rest cancelled
      { ticker, side: 'no', count: '1', price: '0.65', time_in_force: 'FOK' }, // takes the 1 at 0.35
      { ticker, side: 'no', count: '1', price: '0.62', post_only: true }, // the book is empty now: rests
    ]);
    expect(summary(items)).toEqual([
      ['CANCELLED', '0', '0'],
      [400, 'invalid_request'],
      ['CANCELLED', '2', '0'],
      ['FILLED', '1', '0'],
      ['OPEN', '0', '1'],
    ]);
    expect(items[1]!.error.message).toContain('post_only');
    expect((await api.get(`/api/markets/${ticker}/orderbook`)).body.orderbook).toEqual({ yes: [], no: [['0.62', '1']] });
    await checkTradingInvariants(api.db);
  });

  it('refuses the orders the reserve no longer covers and keeps the ones before them (and a later one it covers)', async () => {
    const { ticker } = await markets.newMarket();
    const trader = await account();
    // 1,000 Dots: three reserves of 300, then 300 more is refused, then 100 fits.
    const items = await batch(trader, [
      { ticker, side: 'yes', count: '600', price: '0.50' },
      { ticker, side: 'yes', count: '1000', price: '0.30' },
      { ticker, side: 'yes', count: '750', price: '0.40' },
      { ticker, side: 'yes', count: '600', price: '0.50' },
      { ticker, side: 'yes', count: '200', price: '0.50' },
    ]);
    expect(summary(items)).toEqual([['OPEN', '0', '600'], ['OPEN', '0', '1000'], ['OPEN', '0', '750'], [400, 'invalid_request'], ['OPEN', '0', '200']]);
    expect(items[3]!.error.message).toContain('insufficient balance: 100.00 Dots available');
    expect(await balance(trader)).toEqual({ balance: '1000.00', reserved: '1000.00', available: '0.00' });
    expect((await ordersOf(trader)).length).toBe(4);
  });

  it('shows each placed order on the feed, with its fills', async () => {
    const { ticker } = await markets.newMarket();
    const [maker, taker] = [await account(), await account()];
    const feed = await FeedClient.connect(api.baseUrl, taker);
    feeds.push(feed);
    const [ordersSid, fillsSid] = await feed.subscribe(['user_orders', 'fill']);
    await place(maker, { ticker, side: 'yes', count: '1', price: '0.40' });
    const items = await batch(taker, [
      { ticker, side: 'no', count: '1', price: '0.60' }, // fills against the maker
      { ticker, side: 'no', count: '1', price: '0.10', client_order_id: 'resting' },
      { ticker, side: 'no', count: '1', price: '1.50' },
      { ticker, side: 'yes', count: '2', price: '0.20', time_in_force: 'IOC' }, // nothing to meet: cancelled at once
    ]);
    const placedIds = items.filter((i) => i.order).map((i) => i.order.order_id);
    expect(placedIds).toHaveLength(3);
    await feed.waitFor(() => placedIds.every((id) => feed.ofSid(ordersSid).some((m) => m.msg.order_id === id)), 'a user_order message for every placed order');
    await feed.waitFor(() => feed.ofSid(fillsSid).length >= 1, 'the fill');
    const last = (id: string) => feed.ofSid(ordersSid).filter((m) => m.msg.order_id === id).at(-1)!.msg;
    expect(placedIds.map((id) => last(id).status)).toEqual(['FILLED', 'OPEN', 'CANCELLED']);
    expect(feed.ofSid(fillsSid).map((m) => [m.msg.order_id, m.msg.count])).toEqual([[placedIds[0], '1']]);
  });

  it('is served for concurrent batches of two accounts crossing each other, every Dot accounted for', async () => {
    const { ticker, id } = await markets.newMarket();
    const [a, b] = [await account(), await account()];
    const prices = Array.from({ length: 20 }, (_, i) => 45 + (i % 11));
    const results = await Promise.all([
      ...[0, 1, 2].map(() => batch(a, prices.map((p) => ({ ticker, side: 'yes', count: '1', price: `0.${p}` })))),
      ...[0, 1, 2].map(() => batch(b, prices.map((p) => ({ ticker, side: 'no', count: '1', price: `0.${100 - p + 5}` })))),
    ]);
    expect(results.flat().every((i) => i.order !== null)).toBe(true);
    expect(Number((await api.db('trades').where({ market_id: id }).count({ n: '*' }))[0]!.n)).toBeGreaterThan(20);
    await checkTradingInvariants(api.db);
  });
});

describe('the order-writes budget', () => {
  it('counts a batch as its orders: one larger than what is left is 429 and places nothing', async () => {
    const limited = await TestService.start({ ADMIN_EMAIL: ADMIN.email, ADMIN_PASSWORD: ADMIN.password, RATE_LIMITS: 'on', RATE_LIMIT_ORDER_WRITES: '6/60' });
    try {
      const { ticker } = await (await MarketFactory.create(limited, ADMIN, 'BRL')).newMarket();
      const trader = await limited.register();
      const order = { ticker, side: 'yes', count: '1', price: '0.40' };
      const first = await limited.post(BATCH, { orders: [order, order, order, order] }, { token: trader.token });
      expect(first.status).toBe(201);
      expect(first.headers.get('ratelimit-remaining')).toBe('2');
      const refused = await limited.post(BATCH, { orders: [order, order, order] }, { token: trader.token });
      expect(refused.status).toBe(429);
      expect(refused.body.error.code).toBe('rate_limited');
      expect(refused.body.error.message).toContain('counts 3');
      expect(Number(refused.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
      expect(await limited.db('orders').where({ account_id: trader.user.id }).count({ n: '*' })).toEqual([{ n: '4' }]);
      expect(await limited.read('/api/portfolio/balance', trader.token)).toMatchObject({ reserved: '1.60' });
    } finally {
      await limited.stop();
    }
  });

  it('counts a malformed batch once, as any request refused by validation', async () => {
    const limited = await TestService.start({ RATE_LIMITS: 'on', RATE_LIMIT_ORDER_WRITES: '3/60' });
    try {
      const trader = await limited.register();
      const refused = await limited.post(BATCH, { orders: [] }, { token: trader.token });
      expect(refused.status).toBe(400);
      expect(refused.headers.get('ratelimit-remaining')).toBe('2');
    } finally {
      await limited.stop();
    }
  });
});

import { createHash } from 'node:crypto';
import { Chain, ClobClient, OrderBuilder, OrderType, PriceHistoryInterval, Side, type ApiKeyCreds, type SignedOrder } from '@polymarket/clob-client';
import { Wallet } from 'ethers';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { checkAxiosAnswers, rewardedMarketWithBook } from '../support/clob.js';
import { FeedClient } from '../support/realtime.js';
import { checkTradingInvariants } from '../support/invariants.js';
import { TestService } from '../support/service.js';

/**
 * A market maker's bot as its author runs it: the published `@polymarket/clob-client`, unchanged, signing
 * orders with an ethers 5 wallet and its requests with order-book credentials from `POST
 * /api/portfolio/api-keys`, given `http://host:port/api/clob`. A response interceptor only reads the answers,
 * to check each against the OpenAPI document. An order-book request signature is deterministic: each call
 * below differs from the others made within a second (path, query or body), as an identical one is refused as
 * a replay.
 */

const ADMIN = { email: 'clob-trading-admin@dots.local', password: 'clob-trading-admin-password' };
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

interface Trader {
  token: string;
  wallet: Wallet;
  client: ClobClient;
}

let api: TestService;
let ticker: string;
let market: { conditionId: string; yesTokenId: string; noTokenId: string };
let alice: Trader;
let bob: Trader;
const problems: string[] = [];
const seen: string[] = [];
let stopChecking: (() => void) | undefined;

async function trader(name: string): Promise<Trader> {
  const { token } = await api.register();
  const wallet = Wallet.createRandom();
  const key = await api.post('/api/portfolio/api-keys', { name, kind: 'hmac', scopes: ['read', 'trade'], address: wallet.address }, { token });
  expect(key.status).toBe(201);
  return { token, wallet, client: new ClobClient(`${api.baseUrl}/api/clob`, Chain.POLYGON, wallet, key.body.credentials as ApiKeyCreds) };
}

/** What a refusal leaves unchanged: the account's balance and its orders. */
async function accountState(token: string) {
  return { balance: await api.read('/api/portfolio/balance', token), orders: (await api.read('/api/portfolio/orders?limit=100', token)).orders };
}

const native = (token: string, id: string) => api.read(`/api/portfolio/orders/${id}`, token);

beforeAll(async () => {
  api = await TestService.start({ ADMIN_EMAIL: ADMIN.email, ADMIN_PASSWORD: ADMIN.password, API_KEY_ENCRYPTION_KEY: 'ef'.repeat(32) });
  // Another account rests a YES bid at 0.49 and a NO bid at 0.49 (a YES ask at 0.51), 10 each.
  ticker = await rewardedMarketWithBook(api, ADMIN, 'CLOBT');
  market = (await api.read(`/api/markets/${ticker}`)).market;
  stopChecking = checkAxiosAnswers(api, problems, (method, path, status) => seen.push(`${method} ${path} ${status}`));
  alice = await trader('alice bot');
  bob = await trader('bob bot');
});

afterAll(async () => {
  stopChecking?.();
  await api?.stop();
});

describe('@polymarket/clob-client trading', () => {
  it('finds the market by its condition id and outcome tokens, which the native market shows', async () => {
    expect(market.conditionId).toMatch(/^0x[0-9a-f]{64}$/);
    for (const token of [market.yesTokenId, market.noTokenId]) {
      expect(token).toMatch(/^[0-9]{1,78}$/);
      expect(BigInt(token) < 2n ** 256n).toBe(true);
    }
    // Derived as documented: SHA-256 of the market's id and ticker, then of the condition and the outcome.
    const { id } = (await api.read(`/api/markets/${ticker}`)).market;
    const condition = createHash('sha256').update(`dots-exchange/condition/${id}/${ticker}`).digest();
    expect(market.conditionId).toBe(`0x${condition.toString('hex')}`);
    const token = (outcome: string) => BigInt(`0x${createHash('sha256').update(Buffer.concat([condition, Buffer.from(outcome)])).digest('hex')}`).toString();
    expect([market.yesTokenId, market.noTokenId]).toEqual([token('YES'), token('NO')]);

    const found = await alice.client.getMarket(market.conditionId);
    expect(found).toMatchObject({ condition_id: market.conditionId, market_slug: ticker, active: true, accepting_orders: true, neg_risk: false, minimum_tick_size: 0.01 });
    expect(found.tokens).toEqual([
      { token_id: market.yesTokenId, outcome: 'Yes', price: 0, winner: false },
      { token_id: market.noTokenId, outcome: 'No', price: 0, winner: false },
    ]);
    const page = await alice.client.getMarkets();
    expect(page).toMatchObject({ next_cursor: 'LTE=', count: 1 });
    expect(page.data[0].condition_id).toBe(market.conditionId);
    expect((await alice.client.getMarkets('LTE=')).data).toEqual([]);
    expect(((await alice.client.getMarket(`0x${'0'.repeat(64)}`)) as unknown as { status: number }).status).toBe(404);
  });

  it('reads the books and prices of both tokens, consistent with the native order book', async () => {
    const orderbook = (await api.read(`/api/markets/${ticker}/orderbook`)).orderbook;
    expect(orderbook).toEqual({ yes: [['0.49', '10']], no: [['0.49', '10']] });
    const yes = await alice.client.getOrderBook(market.yesTokenId);
    expect(yes).toMatchObject({ market: market.conditionId, asset_id: market.yesTokenId, bids: [{ price: '0.49', size: '10' }], asks: [{ price: '0.51', size: '10' }], tick_size: '0.01', neg_risk: false, last_trade_price: '0' });
    expect(yes.hash).toBe(await alice.client.getOrderBookHash({ ...yes }));
    // The NO token's book is the YES book seen from NO: its bids are the YES asks at 1 - p.
    expect(await alice.client.getOrderBook(market.noTokenId)).toMatchObject({ bids: [{ price: '0.49', size: '10' }], asks: [{ price: '0.51', size: '10' }] });
    const books = await alice.client.getOrderBooks([{ token_id: market.noTokenId, side: Side.BUY }, { token_id: market.yesTokenId, side: Side.BUY }]);
    expect(books.map((b) => b.asset_id)).toEqual([market.noTokenId, market.yesTokenId]);

    expect(await alice.client.getMidpoint(market.yesTokenId)).toEqual({ mid: '0.5' });
    expect(await alice.client.getPrice(market.yesTokenId, 'BUY')).toEqual({ price: '0.49' });
    expect(await alice.client.getPrice(market.yesTokenId, 'SELL')).toEqual({ price: '0.51' });
    expect(await alice.client.getSpread(market.noTokenId)).toEqual({ spread: '0.02' });
    expect(await alice.client.getMidpoints([{ token_id: market.noTokenId, side: Side.BUY }])).toEqual({ [market.noTokenId]: '0.5' });
    expect(await alice.client.getPrices([{ token_id: market.noTokenId, side: Side.SELL }])).toEqual({ [market.noTokenId]: { SELL: '0.51' } });
    expect(await alice.client.getSpreads([{ token_id: market.yesTokenId, side: Side.BUY }])).toEqual({ [market.yesTokenId]: '0.02' });
    expect(await alice.client.getLastTradePrice(market.yesTokenId)).toEqual({ price: '0', side: '' });
    expect(await alice.client.getTickSize(market.yesTokenId)).toBe('0.01');
    expect(await alice.client.getNegRisk(market.noTokenId)).toBe(false);
    expect(await alice.client.getFeeRateBps(market.yesTokenId)).toBe(0);
    const time = await alice.client.getServerTime();
    expect(Math.abs(time - Date.now() / 1000)).toBeLessThan(60);

    const unknown = (await alice.client.getMidpoint('12345')) as unknown as { status: number; error: { code: string } };
    expect(unknown.status).toBe(404);
    expect(unknown.error.code).toBe('not_found');
  });

  it('rests a signed GTC buy, which a second account crosses; both see the trade, on the real-time feed too', async () => {
    const feed = await FeedClient.connect(api.baseUrl, alice.token);
    const [ordersSid, fillsSid] = await feed.subscribe(['user_orders', 'fill']);
    const placed = await alice.client.createAndPostOrder({ tokenID: market.yesTokenId, price: 0.5, size: 10, side: Side.BUY }, { tickSize: '0.01', negRisk: false });
    expect(placed).toEqual({ success: true, errorMsg: '', orderID: expect.stringMatching(UUID), transactionsHashes: [], status: 'live', makingAmount: '0', takingAmount: '0' });
    const order = await native(alice.token, placed.orderID);
    expect(order).toMatchObject({ ticker, side: 'yes', action: 'buy', price: '0.50', count: '10', status: 'OPEN', time_in_force: 'GTC' });
    expect(order.client_order_id).toMatch(/^0x[0-9a-f]{64}$/);
    expect((await api.read('/api/portfolio/balance', alice.token)).reserved).toBe('5.00');

    const open = await alice.client.getOpenOrders();
    expect(open).toEqual([
      expect.objectContaining({ id: placed.orderID, status: 'LIVE', market: market.conditionId, asset_id: market.yesTokenId, side: 'BUY', original_size: '10', size_matched: '0', price: '0.50', outcome: 'Yes', order_type: 'GTC', expiration: '0', maker_address: alice.wallet.address.toLowerCase() }),
    ]);
    expect(await alice.client.getOpenOrders({ asset_id: market.noTokenId })).toEqual([]);
    expect(await alice.client.getMidpoint(market.yesTokenId)).toEqual({ mid: '0.505' });

    // Buying NO at 0.50 is a YES ask at 0.50: it meets alice's bid, a pair is minted.
    const crossing = await bob.client.createAndPostOrder({ tokenID: market.noTokenId, price: 0.5, size: 10, side: Side.BUY }, { tickSize: '0.01', negRisk: false });
    expect(crossing).toMatchObject({ success: true, status: 'matched', makingAmount: '5', takingAmount: '10' });
    expect(await native(alice.token, placed.orderID)).toMatchObject({ status: 'FILLED', fill_count: '10' });
    expect(await alice.client.getOrder(placed.orderID)).toMatchObject({ id: placed.orderID, status: 'MATCHED', size_matched: '10', original_size: '10', price: '0.50' });
    expect(await alice.client.getOpenOrders({ market: market.conditionId })).toEqual([]);

    const [made] = await alice.client.getTrades();
    expect(made).toMatchObject({
      taker_order_id: crossing.orderID,
      market: market.conditionId,
      asset_id: market.noTokenId,
      side: 'BUY',
      size: '10',
      price: '0.50',
      outcome: 'No',
      trader_side: 'MAKER',
      owner: '',
      maker_orders: [{ order_id: placed.orderID, matched_amount: '10', price: '0.50', asset_id: market.yesTokenId, outcome: 'Yes', side: 'BUY', maker_address: alice.wallet.address.toLowerCase() }],
    });
    const [taken] = await bob.client.getTrades({ asset_id: market.noTokenId });
    expect(taken).toMatchObject({ id: made!.id, trader_side: 'TAKER', maker_address: bob.wallet.address.toLowerCase(), maker_orders: [{ owner: '', maker_address: '' }] });
    const tape = (await api.read(`/api/markets/trades?ticker=${ticker}`)).trades;
    expect(tape[0]).toMatchObject({ trade_id: made!.id, yes_price: '0.50', count: '10', taker_side: 'no' });
    expect((await api.read('/api/portfolio/positions', alice.token)).positions).toEqual([expect.objectContaining({ ticker, side: 'yes', count: '10' })]);
    // Placed, then filled, as the feed tells of every order.
    await feed.waitFor(() => feed.ofSid(fillsSid).length === 1 && feed.ofSid(ordersSid).length === 2, 'the order placed and filled, and its fill');
    expect(feed.ofSid(ordersSid).map((m: { msg: { order_id: string; status: string } }) => [m.msg.order_id, m.msg.status])).toEqual([
      [placed.orderID, 'OPEN'],
      [placed.orderID, 'FILLED'],
    ]);
    expect(feed.problems).toEqual([]);
    feed.ws.close();

    expect(await alice.client.getLastTradePrice(market.yesTokenId)).toEqual({ price: '0.50', side: 'SELL' });
    expect(await alice.client.getLastTradesPrices([{ token_id: market.noTokenId, side: Side.BUY }])).toEqual([{ token_id: market.noTokenId, price: '0.50', side: 'BUY' }]);
    expect((await alice.client.getMarket(market.conditionId)).tokens.map((t: { price: number }) => t.price)).toEqual([0.5, 0.5]);

    // The minute of the trade, read from its candles (refreshed in the background every 250 ms: at once here).
    await api.service.services.trading.flushRollups();
    const history = await alice.client.getPricesHistory({ market: market.yesTokenId, interval: PriceHistoryInterval.ONE_HOUR, fidelity: 1 });
    const minute = Math.ceil(Date.parse(tape[0].created_at) / 60_000) * 60;
    expect(history).toEqual({ history: [{ t: minute, p: 0.5 }] });
    expect(await alice.client.getPricesHistory({ market: market.noTokenId, startTs: minute - 3600, endTs: minute + 60 })).toEqual({ history: [{ t: minute, p: 0.5 }] });
    expect(((await alice.client.getPricesHistory({ market: market.yesTokenId, interval: PriceHistoryInterval.ONE_DAY, startTs: 0 })) as unknown as { status: number }).status).toBe(400);
  });

  it('cancels one order, several, a token\'s, and all, as named', async () => {
    const post = (price: number, tokenID = market.yesTokenId) => alice.client.createAndPostOrder({ tokenID, price, size: 1, side: Side.BUY }, { tickSize: '0.01', negRisk: false });
    const ids = [];
    for (const price of [0.1, 0.11, 0.12, 0.13, 0.14]) ids.push((await post(price)).orderID);
    const no = (await post(0.1, market.noTokenId)).orderID;

    expect(await alice.client.cancelOrder({ orderID: ids[0]! })).toEqual({ canceled: [ids[0]], not_canceled: {} });
    const several = await alice.client.cancelOrders([ids[1]!, ids[2]!]);
    expect(several).toMatchObject({ canceled: [ids[1], ids[2]], not_canceled: {} });
    const ofNo = await alice.client.cancelMarketOrders({ asset_id: market.noTokenId });
    expect(ofNo).toEqual({ canceled: [no], not_canceled: {} });
    expect((await native(alice.token, ids[3])).status).toBe('OPEN');
    const all = await alice.client.cancelAll();
    expect(new Set(all.canceled)).toEqual(new Set([ids[3], ids[4]]));
    for (const id of [...ids, no]) expect((await native(alice.token, id)).status).toBe('CANCELLED');
    expect((await api.read('/api/portfolio/balance', alice.token)).reserved).toBe('0.00');
  });

  it('places 15 signed orders in one request', async () => {
    const orders: SignedOrder[] = [];
    for (let i = 1; i <= 15; i += 1) orders.push(await alice.client.createOrder({ tokenID: market.yesTokenId, price: i / 100, size: 1, side: Side.BUY }, { tickSize: '0.01', negRisk: false }));
    const answers = await alice.client.postOrders(orders.map((order) => ({ order, orderType: OrderType.GTC })));
    expect(answers).toHaveLength(15);
    for (const answer of answers) expect(answer).toMatchObject({ success: true, status: 'live' });
    const open = await alice.client.getOpenOrders({ asset_id: market.yesTokenId });
    expect(new Set(open.map((o: { id: string }) => o.id))).toEqual(new Set(answers.map((a: { orderID: string }) => a.orderID)));
    expect((await api.read('/api/portfolio/orders?status=OPEN&limit=100', alice.token)).orders).toHaveLength(15);
    expect((await alice.client.cancelMarketOrders({ market: market.conditionId })).canceled).toHaveLength(15);
  });

  it('refuses a signature by another key, an unknown token, a fee, an off-tick price and a replay, changing nothing', async () => {
    const terms = { tokenID: market.yesTokenId, price: 0.2, size: 2, side: Side.BUY };
    const options = { tickSize: '0.01' as const, negRisk: false };
    const refused = async (posting: Promise<unknown>, status: number, message: RegExp) => {
      const state = await accountState(alice.token);
      const answer = (await posting) as { status: number; error: { code: string; message: string } };
      expect(answer.status).toBe(status);
      expect(answer.error.message).toMatch(message);
      expect(await accountState(alice.token)).toEqual(state);
    };

    const order = await alice.client.createOrder(terms, options);
    const stranger = await new OrderBuilder(Wallet.createRandom(), Chain.POLYGON).buildOrder(terms, options);
    await refused(alice.client.postOrder({ ...order, signature: stranger.signature }), 400, /signature/);
    await refused(alice.client.postOrder(stranger), 400, /signer must be the address the API key is bound to/);
    await refused(alice.client.postOrder({ ...order, tokenId: '12345' }), 404, /no outcome token/);
    const builder = new OrderBuilder(alice.wallet, Chain.POLYGON);
    await refused(alice.client.postOrder(await builder.buildOrder({ ...terms, feeRateBps: 100 }, options)), 400, /feeRateBps must be 0/);
    await refused(alice.client.postOrder(await builder.buildOrder({ ...terms, price: 0.205 }, { ...options, tickSize: '0.001' })), 400, /0\.01 tick/);
    // Signed for the neg-risk exchange, while the market's event is not mutually exclusive.
    await refused(alice.client.postOrder(await builder.buildOrder(terms, { ...options, negRisk: true })), 400, /signature/);

    const placed = await alice.client.postOrder(order);
    expect(placed).toMatchObject({ success: true, status: 'live' });
    // The same signed order again (deferExec only makes the request's own signature differ).
    await refused(alice.client.postOrder(order, OrderType.GTC, true), 409, /placed before/);
    expect(await alice.client.cancelOrder({ orderID: placed.orderID })).toEqual({ canceled: [placed.orderID], not_canceled: {} });
  });

  it('takes orders of a mutually exclusive event signed for the neg-risk exchange, as the client signs them', async () => {
    const admin = (await api.post('/api/auth/login', ADMIN)).body.token;
    const created = async (path: string, body: object) => expect((await api.post(path, body, { token: admin })).status).toBe(201);
    await created('/api/admin/events', { event_ticker: 'CLOBN-E', series_ticker: 'CLOBT', title: 'Exclusive event', strike_date: '2031-01-01T00:00:00Z', mutually_exclusive: true });
    await created('/api/admin/markets', { ticker: 'CLOBN-E-M1', event_ticker: 'CLOBN-E', title: 'Exclusive' });
    const { yesTokenId } = (await api.read('/api/markets/CLOBN-E-M1')).market;
    expect(await alice.client.getNegRisk(yesTokenId)).toBe(true);
    const placed = await alice.client.createAndPostOrder({ tokenID: yesTokenId, price: 0.3, size: 3, side: Side.BUY });
    expect(placed).toMatchObject({ success: true, status: 'live' });
    expect(await native(alice.token, placed.orderID)).toMatchObject({ ticker: 'CLOBN-E-M1', price: '0.30', count: '3', status: 'OPEN' });
    expect(await alice.client.cancelOrders([placed.orderID])).toMatchObject({ canceled: [placed.orderID] });
  });

  it('keeps every trading invariant with signed orders in the mix', async () => {
    await checkTradingInvariants(api.db);
  });

  it('got answers that all match the OpenAPI document', () => {
    expect(seen.filter((line) => line.includes('/api/clob/')).length).toBeGreaterThanOrEqual(40);
    expect(problems).toEqual([]);
  });
});

describe('the order-writes budget', () => {
  it('counts POST /api/clob/orders as the orders it carries', async () => {
    const limited = await TestService.start({ RATE_LIMITS: 'on', RATE_LIMIT_ORDER_WRITES: '6/60' });
    try {
      const { token } = await limited.register();
      const wallet = Wallet.createRandom();
      const order = await new OrderBuilder(wallet, Chain.POLYGON).buildOrder({ tokenID: '1', price: 0.5, size: 1, side: Side.BUY }, { tickSize: '0.01', negRisk: false });
      const post = { order: { ...order, salt: Number(order.salt), side: 'BUY' }, orderType: 'GTC' };
      // Counted once checked against the document, before any order is read: this account has no order-book key.
      const first = await limited.post('/api/clob/orders', [post, post, post, post], { token });
      expect(first.status).toBe(400);
      expect(first.headers.get('ratelimit-remaining')).toBe('2');
      const refused = await limited.post('/api/clob/orders', [post, post, post], { token });
      expect(refused.status).toBe(429);
      expect(refused.body.error.message).toContain('counts 3');
    } finally {
      await limited.stop();
    }
  });
});

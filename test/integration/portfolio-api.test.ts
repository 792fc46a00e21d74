import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MarketFactory } from '../support/markets.js';
import { TestService } from '../support/service.js';

/**
 * Matching as the API shows it: two accounts crossing, and
 * what follows in fills, positions, balances, the trade tape, the order book and settlements; the cursor
 * collections with their filters. Every response is validated against the OpenAPI document.
 */

const ADMIN = { email: 'portfolio-admin@dots.local', password: 'portfolio-password' };

let api: TestService;
let marketFactory: MarketFactory;
let admin: string;

beforeAll(async () => {
  api = await TestService.start({ ADMIN_EMAIL: ADMIN.email, ADMIN_PASSWORD: ADMIN.password });
  marketFactory = await MarketFactory.create(api, ADMIN, 'PFS');
  admin = marketFactory.adminToken;
});
afterAll(() => api.stop());

/** A new ACTIVE market. */
const newMarket = () => marketFactory.newMarket();

async function resolve(ticker: string, result: 'yes' | 'no' | 'invalid'): Promise<void> {
  expect((await api.post(`/api/admin/markets/${ticker}/resolve`, { result }, { token: admin })).status).toBe(200);
}

const account = async (): Promise<string> => (await api.account()).token;

async function order(token: string, body: Record<string, unknown>): Promise<Record<string, any>> {
  const response = await api.post('/api/portfolio/orders', body, { token });
  if (response.status !== 201) throw new Error(`placing ${JSON.stringify(body)}: ${response.status} ${JSON.stringify(response.body)}`);
  return response.body.order;
}

const read = (path: string, token?: string) => api.read(path, token);

const balance = (token: string) => read('/api/portfolio/balance', token);
const book = async (ticker: string) => (await read(`/api/markets/${ticker}/orderbook`)).orderbook;
const fills = async (token: string, ticker: string) => (await read(`/api/portfolio/fills?ticker=${ticker}`, token)).fills;
const positions = async (token: string, ticker: string) => (await read(`/api/portfolio/positions?ticker=${ticker}`, token)).positions;
const trades = async (ticker: string) => (await read(`/api/markets/trades?ticker=${ticker}`)).trades;

const walk = (path: string, key: string, token?: string) => api.walk(path, key, token);

describe('two accounts crossing', () => {
  it('trades at the maker price, and shows it in orders, fills, positions, balances, the tape and the book', async () => {
    const { ticker, id } = await newMarket();
    const maker = await account();
    const taker = await account();
    expect(await book(ticker)).toEqual({ yes: [], no: [] });

    const bid = await order(maker, { ticker, side: 'yes', count: '10', price: '0.60' });
    expect(await book(ticker)).toEqual({ yes: [['0.60', '10']], no: [] });
    expect(await balance(maker)).toEqual({ balance: '1000.00', reserved: '6.00', available: '994.00' });

    // Buying NO at 0.45 is a YES ask at 0.55: it crosses the YES bid at 0.60, at the maker's price (NO pays 0.40).
    const hit = await order(taker, { ticker, side: 'no', count: '4', price: '0.45' });
    expect(hit).toMatchObject({ status: 'FILLED', price: '0.45', count: '4', fill_count: '4', remaining_count: '0' });
    expect((await api.get(`/api/portfolio/orders/${bid.order_id}`, { token: maker })).body).toMatchObject({ status: 'PARTIAL', count: '10', fill_count: '4', remaining_count: '6' });

    expect(await fills(maker, ticker)).toEqual([
      expect.objectContaining({ order_id: bid.order_id, market_id: id, ticker, side: 'yes', action: 'buy', price: '0.60', count: '4', role: 'maker' }),
    ]);
    expect(await fills(taker, ticker)).toEqual([expect.objectContaining({ order_id: hit.order_id, side: 'no', action: 'buy', price: '0.40', count: '4', role: 'taker' })]);
    expect(await positions(maker, ticker)).toEqual([expect.objectContaining({ market_id: id, ticker, side: 'yes', count: '4', available: '4' })]);
    expect(await positions(taker, ticker)).toEqual([expect.objectContaining({ side: 'no', count: '4', available: '4' })]);
    // The maker paid 2.40 and still reserves 6 x 0.60; the taker reserved 1.80 and got 0.20 back (price improvement).
    expect(await balance(maker)).toEqual({ balance: '997.60', reserved: '3.60', available: '994.00' });
    expect(await balance(taker)).toEqual({ balance: '998.40', reserved: '0.00', available: '998.40' });

    expect(await trades(ticker)).toEqual([expect.objectContaining({ market_id: id, ticker, yes_price: '0.60', no_price: '0.40', count: '4', taker_side: 'no' })]);
    expect(await book(ticker)).toEqual({ yes: [['0.60', '6']], no: [] });
    const market = (await read(`/api/markets/${ticker}`)).market;
    expect(market).toMatchObject({ lastYesPrice: '0.60', lastNoPrice: '0.40', volume: '4', openInterest: '4' });

    // Resting NO bids, best (highest) first, aggregated by price.
    await order(await account(), { ticker, side: 'no', count: '2', price: '0.35' });
    await order(await account(), { ticker, side: 'no', count: '1', price: '0.38' });
    await order(await account(), { ticker, side: 'no', count: '0.5', price: '0.35' });
    await order(await account(), { ticker, side: 'yes', count: '1.25', price: '0.55' });
    expect(await book(ticker)).toEqual({ yes: [['0.60', '6'], ['0.55', '1.25']], no: [['0.38', '1'], ['0.35', '2.5']] });
  });

  it('cancels the resting order of the same account instead of trading with it (self-trade prevention)', async () => {
    const { ticker } = await newMarket();
    const trader = await account();
    const other = await account();
    const own = await order(trader, { ticker, side: 'yes', count: '5', price: '0.60' });
    const others = await order(other, { ticker, side: 'yes', count: '1', price: '0.58' });

    // A NO buy at 0.45 (a YES ask at 0.55) would meet the trader's own bid at 0.60 first: that bid is
    // cancelled and its reserve released; matching goes on with the other account's bid at 0.58.
    const crossing = await order(trader, { ticker, side: 'no', count: '2', price: '0.45' });
    expect(crossing).toMatchObject({ status: 'PARTIAL', fill_count: '1', remaining_count: '1' });
    expect((await api.get(`/api/portfolio/orders/${own.order_id}`, { token: trader })).body).toMatchObject({ status: 'CANCELLED', fill_count: '0', remaining_count: '0' });
    expect((await api.get(`/api/portfolio/orders/${others.order_id}`, { token: other })).body).toMatchObject({ status: 'FILLED' });
    expect(await fills(trader, ticker)).toEqual([expect.objectContaining({ order_id: crossing.order_id, side: 'no', price: '0.42', count: '1', role: 'taker' })]);
    // The trader paid 0.42 for one NO and reserves 0.45 for the resting one; the 3.00 of the own bid is back.
    expect(await balance(trader)).toEqual({ balance: '999.58', reserved: '0.45', available: '999.13' });
    expect(await book(ticker)).toEqual({ yes: [], no: [['0.45', '1']] });
  });

  it('rests a sell of held shares, reserving them (position available), and shows it as a NO bid', async () => {
    const { ticker } = await newMarket();
    const holder = await account();
    await order(holder, { ticker, side: 'yes', count: '4', price: '0.60' });
    await order(await account(), { ticker, side: 'no', count: '4', price: '0.40' });

    const sell = await order(holder, { ticker, side: 'yes', action: 'sell', count: '2.5', price: '0.70' });
    expect(sell).toMatchObject({ side: 'yes', action: 'sell', status: 'OPEN', remaining_count: '2.5' });
    expect(await positions(holder, ticker)).toEqual([expect.objectContaining({ side: 'yes', count: '4', available: '1.5' })]);
    // A YES ask at 0.70 is a NO bid at 0.30.
    expect(await book(ticker)).toEqual({ yes: [], no: [['0.30', '2.5']] });
    const tooMany = await api.post('/api/portfolio/orders', { ticker, side: 'yes', action: 'sell', count: '2', price: '0.70' }, { token: holder });
    expect(tooMany.status).toBe(400);

    // A buyer of YES at 0.75 takes the ask at 0.70; the seller is paid 0.70 per share.
    const before = await balance(holder);
    await order(await account(), { ticker, side: 'yes', count: '2.5', price: '0.75' });
    expect(await positions(holder, ticker)).toEqual([expect.objectContaining({ side: 'yes', count: '1.5', available: '1.5' })]);
    expect(Number((await balance(holder)).balance) - Number(before.balance)).toBeCloseTo(1.75, 6);
  });
});

describe('settlements', () => {
  it('pays 1 Dot per winning share when a market resolves, cancels resting orders, and lists the settlement', async () => {
    const { ticker, id } = await newMarket();
    const yesHolder = await account();
    const noHolder = await account();
    await order(yesHolder, { ticker, side: 'yes', count: '3', price: '0.70' });
    await order(noHolder, { ticker, side: 'no', count: '3', price: '0.30' });
    const resting = await order(yesHolder, { ticker, side: 'yes', count: '1', price: '0.10' });

    await resolve(ticker, 'yes');
    const settlements = (await read(`/api/portfolio/settlements?ticker=${ticker}`, yesHolder)).settlements;
    expect(settlements).toEqual([expect.objectContaining({ market_id: id, ticker, result: 'yes', yes_count: '3', no_count: '0', payout: '3.00' })]);
    expect((await read(`/api/portfolio/settlements?ticker=${ticker}`, noHolder)).settlements).toEqual([
      expect.objectContaining({ result: 'yes', yes_count: '0', no_count: '3', payout: '0.00' }),
    ]);
    expect((await api.get(`/api/portfolio/orders/${resting.order_id}`, { token: yesHolder })).body.status).toBe('CANCELLED');
    // 1000 - 2.10 + 3.00; the resting bid's reserve is released.
    expect(await balance(yesHolder)).toEqual({ balance: '1000.90', reserved: '0.00', available: '1000.90' });
    expect(await balance(noHolder)).toEqual({ balance: '999.10', reserved: '0.00', available: '999.10' });
    expect(await positions(yesHolder, ticker)).toEqual([]);
    expect(await book(ticker)).toEqual({ yes: [], no: [] });
    // The tape keeps the trade.
    expect(await trades(ticker)).toHaveLength(1);
  });

  it('pays 0.50 per share on an invalid result', async () => {
    const { ticker } = await newMarket();
    const a = await account();
    const b = await account();
    await order(a, { ticker, side: 'yes', count: '2', price: '0.80' });
    await order(b, { ticker, side: 'no', count: '2', price: '0.20' });
    await resolve(ticker, 'invalid');
    expect((await read('/api/portfolio/settlements', a)).settlements).toEqual([expect.objectContaining({ result: 'invalid', yes_count: '2', payout: '1.00' })]);
    expect((await read('/api/portfolio/settlements', b)).settlements).toEqual([expect.objectContaining({ result: 'invalid', no_count: '2', payout: '1.00' })]);
    expect(await balance(a)).toMatchObject({ balance: '999.40' });
    expect(await balance(b)).toMatchObject({ balance: '1000.60' });
  });
});

describe('cursor collections', () => {
  it('walks fills, positions, trades and settlements page by page, newest first, filtered by ticker', async () => {
    const markets = [await newMarket(), await newMarket(), await newMarket()];
    const trader = await account();
    const counterparty = await account();
    for (const { ticker } of markets) {
      for (const price of ['0.50', '0.51']) {
        await order(trader, { ticker, side: 'yes', count: '1', price });
        await order(counterparty, { ticker, side: 'no', count: '1', price: '0.50' });
      }
    }

    const allFills = await walk('/api/portfolio/fills?limit=2', 'fills', trader);
    expect(allFills.items).toHaveLength(6);
    expect(allFills.pages).toBe(3);
    const fillIds = allFills.items.map((f) => Number(f.fill_id));
    expect(fillIds).toEqual([...fillIds].sort((x, y) => y - x));
    expect(new Set(allFills.items.map((f) => f.ticker))).toEqual(new Set(markets.map((m) => m.ticker)));

    const oneMarket = await walk(`/api/portfolio/fills?ticker=${markets[1]!.ticker.toLowerCase()}&limit=1`, 'fills', trader);
    expect(oneMarket.items.map((f) => `${f.ticker}:${f.price}`)).toEqual([`${markets[1]!.ticker}:0.51`, `${markets[1]!.ticker}:0.50`]);

    const allPositions = await walk('/api/portfolio/positions?limit=1', 'positions', trader);
    expect(allPositions.items.map((p) => p.ticker)).toEqual([...markets].reverse().map((m) => m.ticker));
    expect(allPositions.items.every((p) => p.side === 'yes' && p.count === '2')).toBe(true);

    const tape = await walk(`/api/markets/trades?ticker=${markets[0]!.ticker}&limit=1`, 'trades');
    expect(tape.items.map((t) => t.yes_price)).toEqual(['0.51', '0.50']);
    expect(tape.pages).toBe(2);
    const everything = await walk('/api/markets/trades?limit=100', 'trades');
    expect(everything.items.length).toBeGreaterThanOrEqual(6);
    const tradeIds = everything.items.map((t) => Number(t.trade_id));
    expect(tradeIds).toEqual([...tradeIds].sort((x, y) => y - x));

    for (const { ticker } of markets) await resolve(ticker, 'no');
    const allSettlements = await walk('/api/portfolio/settlements?limit=2', 'settlements', trader);
    expect(allSettlements.items.map((s) => s.ticker)).toEqual([...markets].reverse().map((m) => m.ticker));
    expect(allSettlements.items.every((s) => s.payout === '0.00' && s.yes_count === '2')).toBe(true);

    // Unknown markets match nothing; other accounts see nothing of the trader's.
    expect((await read('/api/portfolio/fills?ticker=NO-SUCH', trader)).fills).toEqual([]);
    expect((await read('/api/markets/trades?ticker=NO-SUCH')).trades).toEqual([]);
    const stranger = await account();
    for (const key of ['fills', 'positions', 'settlements']) expect((await read(`/api/portfolio/${key}`, stranger))[key]).toEqual([]);
  });

  it('refuses malformed parameters with 400 and private collections without a token with 401', async () => {
    const trader = await account();
    for (const path of ['/api/portfolio/positions', '/api/portfolio/fills', '/api/portfolio/settlements', '/api/markets/trades']) {
      for (const query of ['limit=abc', 'limit=0', 'cursor=garbage', 'ticker=A%00B', `ticker=${'X'.repeat(65)}`]) {
        const response = await api.get(`${path}?${query}`, { token: trader });
        expect(response.status, `${path}?${query}`).toBe(400);
        expect(response.body.error.code).toBe('invalid_request');
      }
      // Page sizes above 100 are clamped, never refused.
      expect((await api.get(`${path}?limit=5000`, { token: trader })).status).toBe(200);
    }
    for (const path of ['/api/portfolio/balance', '/api/portfolio/positions', '/api/portfolio/fills', '/api/portfolio/settlements']) {
      const response = await api.get(path);
      expect(response.status, path).toBe(401);
      expect(response.body.error.code).toBe('unauthorized');
    }
  });
});

describe('public market data', () => {
  it('serves the tape and the book without a token; the book of an unknown market is 404', async () => {
    const { ticker } = await newMarket();
    expect((await api.get('/api/markets/trades')).status).toBe(200);
    expect((await api.get(`/api/markets/${ticker}/orderbook`)).status).toBe(200);
    expect((await api.get(`/api/markets/${ticker.toLowerCase()}/orderbook`)).body).toEqual({ orderbook: { yes: [], no: [] } });
    const unknown = await api.get('/api/markets/NO-SUCH/orderbook');
    expect(unknown.status).toBe(404);
    expect(unknown.body.error.code).toBe('not_found');
    expect((await api.get(`/api/markets/${'X'.repeat(65)}/orderbook`)).status).toBe(400);
    expect((await api.get('/api/markets/A%20B/orderbook')).status).toBe(400);
  });

  it('a new account holds STARTING_BALANCE Dots, as decimal strings', async () => {
    const body = await balance(await account());
    expect(body).toEqual({ balance: '1000.00', reserved: '0.00', available: '1000.00' });
  });
});

import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DomainError } from '../../src/domain/errors.js';
import type { TradingService } from '../../src/domain/trading/service.js';
import { MarketFactory } from '../support/markets.js';
import { TestService } from '../support/service.js';

/**
 * Price history: the candles that trading transactions write (market_candles), read as the native
 * candlesticks and as the price history of the order-book client, checked against the trade tape.
 */

const ADMIN = { email: 'candles-admin@dots.local', password: 'candles-password' };

let api: TestService;
let markets: MarketFactory;
let trading: TradingService;

beforeAll(async () => {
  api = await TestService.start({ ADMIN_EMAIL: ADMIN.email, ADMIN_PASSWORD: ADMIN.password });
  markets = await MarketFactory.create(api, ADMIN, 'CNDL');
  trading = api.service.services.trading;
});
afterAll(() => api.stop());

const account = async (): Promise<string> => (await api.register()).user.id;
const nowSeconds = () => Math.floor(Date.now() / 1000);

/** A trade of `count` contracts at YES price `price`: a resting NO buy met by a YES buy (a mint). */
async function trade(ticker: string, price: string, count: string): Promise<void> {
  const [maker, taker] = [await account(), await account()];
  await trading.placeOrder(maker, { ticker, side: 'no', count, price: (1 - Number(price)).toFixed(2) });
  const order = await trading.placeOrder(taker, { ticker, side: 'yes', count, price, time_in_force: 'IOC' });
  expect(order.fill_count).toBe(count);
}

describe('price history (TradingService.priceHistory)', () => {
  it('gives the last trade price per period from the first trade on, by ticker or id', async () => {
    const { ticker, id } = await markets.newMarket();
    const start = nowSeconds() - 3600;
    expect(await trading.priceHistory(ticker, { start, end: nowSeconds() + 60 }, 1)).toEqual([]);
    await trade(ticker, '0.40', '2');
    await trade(ticker, '0.45', '1');
    const points = await trading.priceHistory(ticker, { start, end: nowSeconds() + 60 }, 1);
    expect(points.length).toBeGreaterThanOrEqual(1);
    expect(points.at(-1)!.p).toBe('0.45');
    for (const point of points) expect(point.t % 60).toBe(0);
    expect(await trading.priceHistory(id, { start, end: nowSeconds() + 60 }, 1)).toEqual(points);
    // Hours: one point, the hour in progress.
    expect(await trading.priceHistory(ticker, { start, end: nowSeconds() + 3600 }, 60)).toEqual([{ t: Math.ceil(nowSeconds() / 3600) * 3600, p: '0.45' }]);
  });

  it('refuses an unknown market, a range that starts after it ends and too many periods', async () => {
    const now = nowSeconds();
    await expect(trading.priceHistory('CNDL-NONE', { start: now - 60, end: now }, 1)).rejects.toMatchObject({ code: 'not_found' });
    const { ticker } = await markets.newMarket();
    await expect(trading.priceHistory(ticker, { start: now, end: now - 60 }, 1)).rejects.toBeInstanceOf(DomainError);
    await expect(trading.priceHistory(ticker, { start: now - 86_400 * 7, end: now }, 1)).rejects.toMatchObject({ code: 'invalid_request' });
  });
});

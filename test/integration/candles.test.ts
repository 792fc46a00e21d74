import fc from 'fast-check';
import { Configuration, MarketApi } from 'kalshi-typescript';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DomainError } from '../../src/domain/errors.js';
import { MarketRollups } from '../../src/domain/trading/rollups.js';
import type { TradingService } from '../../src/domain/trading/service.js';
import { MarketFactory } from '../support/markets.js';
import { TestService } from '../support/service.js';

/**
 * Price history: the candles that follow trading (market_candles), read as the native candlesticks and as
 * the price history of the order-book client, checked against the trade tape. Candles are refreshed in the
 * background, every 250 ms: each test has the refresh made at once (`refreshed`) before it reads.
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
const refreshed = () => trading.flushRollups();
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
    await refreshed();
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

/** The candles of `ticker` over [start, end] as the native path answers them (validated against the document). */
async function candlesticks(ticker: string, start: number, end: number, period: 1 | 60 | 1440, series = 'CNDL'): Promise<any[]> {
  const body = await api.read(`/api/series/${series}/markets/${ticker}/candlesticks?start_ts=${start}&end_ts=${end}&period_interval=${period}`);
  expect(body.ticker).toBe(ticker);
  return body.candlesticks;
}

const minute = (seconds: number) => Math.floor(seconds / 60) * 60;

describe('GET /api/series/{series_ticker}/markets/{ticker}/candlesticks', () => {
  it('answers the trades of each minute, hour and day, and the book at its end', async () => {
    const { ticker } = await markets.newMarket();
    const before = nowSeconds();
    await trade(ticker, '0.40', '2');
    await trade(ticker, '0.47', '1.5');
    await trade(ticker, '0.42', '1');
    const bidder = await account();
    await trading.placeOrder(bidder, { ticker, side: 'yes', count: '3', price: '0.35' });
    await trading.placeOrder(bidder, { ticker, side: 'no', count: '3', price: '0.40' });
    await refreshed();
    const after = nowSeconds();
    const tape = await api.db('trades').join('markets', 'markets.id', 'trades.market_id').where('markets.ticker', ticker).orderBy('trades.id').select('trades.created_at');
    // The trades' minute (the test may straddle two: then only the last minute's checks apply to the whole).
    const sameMinute = minute(tape[0].created_at.getTime() / 1000) === minute(tape.at(-1).created_at.getTime() / 1000);
    for (const period of [1, 60, 1440] as const) {
      const candles = await candlesticks(ticker, before - 86_400, after + 86_400, period);
      const last = candles.at(-1);
      expect(last.yes_bid.close_dollars).toBe('0.35');
      expect(last.yes_ask.close_dollars).toBe('0.60');
      expect(last.open_interest_fp).toBe('4.50');
      if (period > 1 || sameMinute) {
        const traded = candles.filter((c) => c.price.close_dollars !== undefined);
        expect(traded).toHaveLength(1);
        expect(traded[0]).toMatchObject({
          price: { open_dollars: '0.40', low_dollars: '0.40', high_dollars: '0.47', close_dollars: '0.42', mean_dollars: '0.427778' },
          volume_fp: '4.50',
        });
        expect(traded[0].end_period_ts % (period * 60)).toBe(0);
      }
    }
  });

  it('refuses a market of another series, an unknown market, a bad range and too many periods', async () => {
    const { ticker } = await markets.newMarket();
    const now = nowSeconds();
    const path = (series: string, market: string, start: number, end: number, period: number) =>
      `/api/series/${series}/markets/${market}/candlesticks?start_ts=${start}&end_ts=${end}&period_interval=${period}`;
    expect((await api.get(path('CNDL', ticker.toLowerCase(), now - 60, now, 1))).status).toBe(200);
    expect((await api.get(path('OTHER', ticker, now - 60, now, 1))).status).toBe(404);
    expect((await api.get(path('CNDL', 'CNDL-NONE', now - 60, now, 1))).status).toBe(404);
    const reversed = await api.get(path('CNDL', ticker, now, now - 60, 1));
    expect(reversed.status).toBe(400);
    expect(reversed.body.error.message).toMatch(/starts after it ends/);
    const tooMany = await api.get(path('CNDL', ticker, now - 5001 * 60, now, 1));
    expect(tooMany.status).toBe(400);
    expect(tooMany.body.error.message).toMatch(/more than 5000/);
    expect((await api.get(path('CNDL', ticker, now - 4990 * 60, now, 1))).status).toBe(200);
    expect((await api.get(path('CNDL', ticker, now - 60, now, 5))).status).toBe(400);
    expect((await api.get(`/api/series/CNDL/markets/${ticker}/candlesticks?start_ts=${now}&period_interval=1`)).status).toBe(400);
  });
});

describe('GET /api/markets/candlesticks', () => {
  it('answers each market in the order asked, 404 for an unknown one and 400 beyond 10,000 candlesticks', async () => {
    const [a, b] = [await markets.newMarket(), await markets.newMarket()];
    await trade(b.ticker, '0.61', '1');
    await refreshed();
    const now = nowSeconds();
    const body = await api.read(`/api/markets/candlesticks?market_tickers=${b.ticker},${a.ticker.toLowerCase()}&start_ts=${now - 3600}&end_ts=${now + 3600}&period_interval=60`);
    expect(body.markets.map((m: any) => m.market_ticker)).toEqual([b.ticker, a.ticker]);
    expect(body.markets[0].candlesticks.at(-1).price.close_dollars).toBe('0.61');
    expect(body.markets[1].candlesticks).toEqual([]);
    expect((await api.get(`/api/markets/candlesticks?market_tickers=${a.ticker},CNDL-NONE&start_ts=${now - 60}&end_ts=${now}&period_interval=1`)).status).toBe(404);
    const c = await markets.newMarket();
    const tickers = `${a.ticker},${b.ticker},${c.ticker}`;
    // 3 markets of 3,334 minutes (10,002 candlesticks), then of 3,333 (9,999).
    expect((await api.get(`/api/markets/candlesticks?market_tickers=${tickers}&start_ts=${minute(now) - 3334 * 60}&end_ts=${minute(now) - 60}&period_interval=1`)).status).toBe(400);
    expect((await api.get(`/api/markets/candlesticks?market_tickers=${tickers}&start_ts=${minute(now) - 3333 * 60}&end_ts=${minute(now) - 60}&period_interval=1`)).status).toBe(200);
    const tooMany = await api.get(`/api/markets/candlesticks?market_tickers=${tickers}&start_ts=${now - 4500 * 60}&end_ts=${now - 500 * 60}&period_interval=1`);
    expect(tooMany.status).toBe(400);
    expect(tooMany.body.error.message).toMatch(/more than 10000 candlesticks/);
  });
});

describe('the published Kalshi SDK', () => {
  it('reads the candlesticks of one market and of several from the native paths', async () => {
    const { ticker } = await markets.newMarket();
    await trade(ticker, '0.30', '2');
    await trade(ticker, '0.34', '2');
    await refreshed();
    const sdk = new MarketApi(new Configuration({ basePath: `${api.baseUrl}/api` }));
    const now = nowSeconds();
    const one = (await sdk.getMarketCandlesticks('cndl', ticker, now - 7200, now + 3600, 60)).data;
    expect(one.ticker).toBe(ticker);
    const last = one.candlesticks.at(-1)!;
    expect(last.price).toMatchObject({ open_dollars: '0.30', high_dollars: '0.34', low_dollars: '0.30', close_dollars: '0.34', mean_dollars: '0.32' });
    expect(last.volume_fp).toBe('4.00');
    expect(last.open_interest_fp).toBe('4.00');
    expect(last.yes_bid.close_dollars).toBe('0.00');
    expect(last.yes_ask.close_dollars).toBe('1.00');
    const batch = (await sdk.batchGetMarketCandlesticks(ticker, now - 7200, now + 3600, 60)).data;
    expect(batch.markets).toEqual([{ market_ticker: ticker, candlesticks: one.candlesticks }]);
  });
});

describe('candles and the trade tape', () => {
  /** Each step: NO bids resting at these YES prices, then one YES buy sweeping them all in one transaction. */
  const stepsArb = fc.array(fc.array(fc.record({ ticks: fc.integer({ min: 1, max: 99 }), count: fc.constantFrom('1', '2', '0.5', '3.25') }), { minLength: 1, maxLength: 4 }), {
    minLength: 1,
    maxLength: 5,
  });

  it('agree: open, high, low, close, mean, volume, previous and open interest of every minute, hour and day, whatever trades are made', async () => {
    await fc.assert(
      fc.asyncProperty(stepsArb, async (steps) => {
        const { ticker } = await markets.newMarket();
        const [maker, taker] = [await account(), await account()];
        const start = nowSeconds() - 120;
        for (const levels of steps) {
          for (const { ticks, count } of levels) await trading.placeOrder(maker, { ticker, side: 'no', count, price: ((100 - ticks) / 100).toFixed(2) });
          const total = levels.reduce((sum, l) => sum + Number(l.count), 0);
          const top = Math.max(...levels.map((l) => l.ticks));
          const order = await trading.placeOrder(taker, { ticker, side: 'yes', count: String(total), price: (top / 100).toFixed(2), time_in_force: 'IOC' });
          expect(Number(order.fill_count)).toBe(total);
        }
        await refreshed();
        const tape: Array<{ t: number; price: number; count: number }> = (
          await api.db('trades').join('markets', 'markets.id', 'trades.market_id').where('markets.ticker', ticker).orderBy('trades.id').select('trades.created_at', 'trades.yes_price', 'trades.count')
        ).map((r: any) => ({ t: r.created_at.getTime() / 1000, price: Math.round(Number(r.yes_price) * 100), count: Math.round(Number(r.count) * 10_000) }));
        const end = nowSeconds() + 60;
        for (const period of [1, 60, 1440] as const) expect(await candlesticks(ticker, start, end, period)).toEqual(expected(tape, start, end, period));
      }),
      { numRuns: 8 },
    );
  }, 300_000);
});

/**
 * The candles an independent reading of a trade tape gives (prices in ticks, counts in lots; every trade a mint):
 * every period ending in [start, end] from the first trade's on, no later than the one in progress.
 */
function expected(tape: ReadonlyArray<{ t: number; price: number; count: number }>, start: number, end: number, period: number): any[] {
  const seconds = period * 60;
  const dollars = (micro: number) => (micro / 1e6).toFixed(6).replace(/(\.\d\d\d*?)0+$/, '$1');
  const ticks = (t: number) => dollars(t * 10_000);
  const lots = (l: number) => (l / 10_000).toFixed(4).replace(/(\.\d\d\d*?)0+$/, '$1');
  const out: any[] = [];
  const last = Math.min(Math.floor(end / seconds) * seconds, Math.floor(nowSeconds() / seconds) * seconds + seconds);
  let previous: number | undefined;
  let openInterest = 0;
  for (let e = Math.ceil(start / seconds) * seconds; e <= last; e += seconds) {
    const earlier = tape.filter((x) => x.t < e - seconds);
    const inside = tape.filter((x) => x.t >= e - seconds && x.t < e);
    if (earlier.length === 0 && inside.length === 0) continue;
    if (previous === undefined && earlier.length > 0) {
      previous = earlier.at(-1)!.price;
      openInterest = earlier.reduce((s, x) => s + x.count, 0);
    }
    const price: Record<string, string> = {};
    if (inside.length > 0) {
      const volume = inside.reduce((s, x) => s + x.count, 0);
      const notional = inside.reduce((s, x) => s + x.price * x.count, 0);
      Object.assign(price, {
        open_dollars: ticks(inside[0]!.price),
        low_dollars: ticks(Math.min(...inside.map((x) => x.price))),
        high_dollars: ticks(Math.max(...inside.map((x) => x.price))),
        close_dollars: ticks(inside.at(-1)!.price),
        mean_dollars: dollars(Math.round((notional * 10_000) / volume)),
      });
    }
    if (previous !== undefined) price.previous_dollars = ticks(previous);
    const volume = inside.reduce((s, x) => s + x.count, 0);
    openInterest += volume;
    out.push({
      end_period_ts: e,
      // Every resting order was taken: no bid, no ask at any period's end.
      yes_bid: expect.objectContaining({ close_dollars: '0.00' }),
      yes_ask: expect.objectContaining({ close_dollars: '1.00' }),
      price,
      volume_fp: lots(volume),
      open_interest_fp: lots(openInterest),
    });
    if (inside.length > 0) previous = inside.at(-1)!.price;
  }
  return out;
}

describe('the candles\' refresh', () => {
  /**
   * A market's candle rows with trades, as stored, without the book's columns: those are recorded at the
   * refresh's time, which may fall in a later minute.
   */
  const tradeRowsOf = (id: string) =>
    api.db('market_candles').where({ market_id: id }).whereNotNull('close').orderBy(['period', 'start_ts'])
      .select('period', 'start_ts', 'open', 'high', 'low', 'close', 'price_volume', 'volume', 'open_interest');

  it('counts the trades a stopped process left uncounted, once, however many processes refresh at the same time', async () => {
    const { ticker, id } = await markets.newMarket();
    await trade(ticker, '0.40', '2');
    await trade(ticker, '0.55', '1');
    await refreshed();
    const counted = await tradeRowsOf(id);
    expect(counted.filter((r) => r.period === 1).reduce((sum, r) => sum + Number(r.volume), 0)).toBe(3);

    // As a process that committed these trades and stopped before refreshing would leave them.
    await api.db('market_candles').where({ market_id: id }).delete();
    await api.db('market_candle_marks').where({ market_id: id }).update({ last_trade_id: 0 });
    // Eight processes start: each one's first refresh looks for markets whose trades the candles lack.
    const processes = Array.from({ length: 8 }, () => new MarketRollups(api.db));
    await Promise.all(processes.map((p) => p.flush()));
    expect(await tradeRowsOf(id)).toEqual(counted);
    expect(await processes[0]!.flush()).toBe(0);
  });
});

describe('candles over time', () => {
  /** Trades at random minutes of the last 5 days (prices in ticks, counts in lots), as the tape would hold them. */
  const tapeArb = fc
    .array(fc.record({ minutesAgo: fc.integer({ min: 1, max: 5 * 1440 }), second: fc.integer({ min: 0, max: 59 }), price: fc.integer({ min: 1, max: 99 }), count: fc.integer({ min: 1, max: 50_000 }) }), {
      minLength: 1,
      maxLength: 40,
    })
    .map((trades) => {
      const now = minute(nowSeconds());
      return trades.map((t) => ({ t: now - t.minutesAgo * 60 + t.second, price: t.price, count: t.count })).sort((a, b) => a.t - b.t);
    });

  it('are the periods of the trades, with empty periods carried, for 1-, 60- and 1440-minute periods over random times', async () => {
    const { ticker, id } = await markets.newMarket();
    await fc.assert(
      fc.asyncProperty(tapeArb, fc.integer({ min: 0, max: 6 * 1440 }), fc.integer({ min: 0, max: 1440 }), async (tape, startAgo, endAgo) => {
        // The rows the refresh writes for these trades (every one a mint: open interest grows by each), then read.
        await api.db('market_candles').where({ market_id: id }).delete();
        const rows = new Map<string, Record<string, unknown>>();
        let openInterest = 0;
        for (const x of tape) {
          openInterest += x.count;
          for (const period of [1, 60, 1440]) {
            const start = Math.floor(x.t / (period * 60)) * period * 60;
            const key = `${period}:${start}`;
            const row = rows.get(key) as any;
            const price = x.price / 100;
            if (!row) {
              rows.set(key, { market_id: id, period, start_ts: new Date(start * 1000), open: price, high: price, low: price, close: price, price_volume: (x.price * x.count) / 1e6, volume: x.count / 1e4, open_interest: openInterest / 1e4, yes_bid: 0, yes_bid_low: 0, yes_bid_high: 0, yes_ask: 1, yes_ask_low: 1, yes_ask_high: 1 });
            } else {
              Object.assign(row, { high: Math.max(row.high, price), low: Math.min(row.low, price), close: price, price_volume: row.price_volume + (x.price * x.count) / 1e6, volume: row.volume + x.count / 1e4, open_interest: openInterest / 1e4 });
            }
          }
        }
        // Sums of micro-Dots and lots as exact decimal text.
        const exact = [...rows.values()].map((r: any) => ({ ...r, price_volume: r.price_volume.toFixed(6), volume: r.volume.toFixed(4), open_interest: r.open_interest.toFixed(4) }));
        await api.db('market_candles').insert(exact);
        const now = nowSeconds();
        const [start, end] = [now - startAgo * 60, now - endAgo * 60];
        if (start > end) return;
        for (const period of [1, 60, 1440] as const) {
          const periods = Math.floor(end / (period * 60)) - Math.ceil(start / (period * 60)) + 1;
          if (periods > 5000) continue;
          expect(await candlesticks(ticker, start, end, period)).toEqual(expected(tape, start, end, period));
        }
      }),
      { numRuns: 25 },
    );
  }, 300_000);
});

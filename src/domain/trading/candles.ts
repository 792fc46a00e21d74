import * as repo from '../../db/repositories/candles.js';
import { findMarket } from '../../db/repositories/trading.js';
import type { Queryable } from '../../db/knex.js';
import { clip, invalid, notFound } from '../errors.js';
import { marketRefOf } from '../catalogue/names.js';
import { formatMicroDots, formatStoredLots, formatTicks, lotsOf, microOf, TICKS_PER_DOT } from './money.js';

/**
 * Price history, from the candles kept per market and minute, hour and day (rollups.ts refreshes them after
 * each trading transaction): a period of any whole number of minutes sums the rows that start in it (days when the
 * period is whole days, hours when whole hours, else minutes), never the trade tape. A period ends at a
 * multiple of its length since the Unix epoch (days at 00:00 UTC) and holds what happened from its start up
 * to, not including, its end. Periods without trades carry the last price before them (`previous`), the
 * open interest and the bid and ask; periods before anything was recorded for the market are left out, and
 * so are periods that end after the current one.
 */

/** The most periods one market's request may span. */
export const MAX_PERIODS = 5000;

/** Best bid or ask over a period: at its start (the close of the one before), lowest, highest, at its end. */
export interface QuoteRange {
  open: string;
  low: string;
  high: string;
  close: string;
}

/** One period. Prices are YES prices in Dots, counts contracts, as decimal strings. */
export interface Candle {
  /** Unix seconds at which the period ends. */
  end: number;
  /** The period's trades (absent without trades): `mean` is weighted by contracts, to 6 decimals. */
  price?: { open: string; low: string; high: string; close: string; mean: string };
  /** The last trade's price before the period (absent when none). */
  previous?: string;
  /** Best YES bid: 0 when there was none (or none was recorded). */
  yesBid: QuoteRange;
  /** Best YES ask: 1 when there was none (or none was recorded). */
  yesAsk: QuoteRange;
  volume: string;
  openInterest: string;
}

/** The periods a request covers: those ending in [start, end] (Unix seconds), up to the current one. */
export interface PeriodRange {
  /** End of the first period. */
  first: number;
  /** End of the last period (before `first` when none). */
  last: number;
  seconds: number;
}

export function periodRange(start: number, end: number, minutes: number, now: Date): PeriodRange {
  if (!Number.isSafeInteger(minutes) || minutes < 1) throw invalid('the period must be a whole number of minutes');
  if (start > end) throw invalid('the range starts after it ends');
  const seconds = minutes * 60;
  const first = Math.ceil(start / seconds) * seconds;
  const current = Math.floor(now.getTime() / 1000 / seconds) * seconds + seconds;
  const last = Math.min(Math.floor(end / seconds) * seconds, current);
  const count = last < first ? 0 : (last - first) / seconds + 1;
  if (count > MAX_PERIODS) {
    throw invalid(`the range spans ${count} periods, more than ${MAX_PERIODS}: shorten it or take longer periods`);
  }
  return { first, last, seconds };
}

const periodCount = (range: PeriodRange) => (range.last < range.first ? 0 : (range.last - range.first) / range.seconds + 1);

/** Each tick count's text, 0 to 100 ('0.00' .. '1.00'): a candle formats up to 12 prices. */
const TICK_TEXT = Array.from({ length: TICKS_PER_DOT + 1 }, (_, t) => formatTicks(t));
const NO_BID = 0;
const NO_ASK = TICKS_PER_DOT;

/**
 * The candles of a range from its periods' sums (`rows`, in time order, each ending in the range) and what was
 * known before the range. Pure.
 */
export function buildCandles(range: PeriodRange, rows: readonly repo.CandleRow[], before: repo.CandleState): Candle[] {
  const candles: Candle[] = [];
  let previous = before.close;
  let bid = before.yes_bid;
  let ask = before.yes_ask;
  let openInterest = before.open_interest;
  let next = 0;
  for (let end = range.first; end <= range.last; end += range.seconds) {
    const row = rows[next]?.end_ts === end ? rows[next++] : undefined;
    if (!row && openInterest === null) continue;
    const candle: Candle = {
      end,
      yesBid: quote(bid, row?.yes_bid ?? bid ?? NO_BID, row?.yes_bid_low, row?.yes_bid_high),
      yesAsk: quote(ask, row?.yes_ask ?? ask ?? NO_ASK, row?.yes_ask_low, row?.yes_ask_high),
      volume: row ? formatStoredLots(row.volume, 2) : '0.00',
      openInterest: formatStoredLots(row?.open_interest ?? openInterest!, 2),
    };
    if (previous !== null) candle.previous = TICK_TEXT[previous]!;
    if (row?.close != null) {
      candle.price = { open: TICK_TEXT[row.open!]!, low: TICK_TEXT[row.low!]!, high: TICK_TEXT[row.high!]!, close: TICK_TEXT[row.close]!, mean: meanPrice(row.price_volume, row.volume) };
      previous = row.close;
    }
    if (row) {
      bid = row.yes_bid ?? bid;
      ask = row.yes_ask ?? ask;
      openInterest = row.open_interest;
    }
    candles.push(candle);
  }
  return candles;
}

/** A quote over a period (ticks) that opened at `opened` (unknown: as it closed) and closed at `close`, within [low, high] between. */
function quote(opened: number | null, close: number, low: number | null | undefined, high: number | null | undefined): QuoteRange {
  const open = opened ?? close;
  const last = close;
  return {
    open: TICK_TEXT[open]!,
    low: TICK_TEXT[Math.min(open, last, low ?? last)]!,
    high: TICK_TEXT[Math.max(open, last, high ?? last)]!,
    close: TICK_TEXT[last]!,
  };
}

/** Price x contracts over contracts, to the micro-Dot, half up. */
function meanPrice(priceVolume: string, volume: string): string {
  const lots = lotsOf(volume);
  // micro-Dots x contracts / contracts: (micro x 10^4 / lots) micro-Dots.
  const scaled = microOf(priceVolume) * 10_000n;
  return dollars((scaled * 2n + lots) / (lots * 2n));
}

/** Micro-Dots as Dots with 2 to 6 decimals ('0.45', '0.4525'). */
const dollars = (micro: bigint) => formatMicroDots(micro).replace(/(\.\d\d\d*?)0+$/, '$1');

/** One point of a price history: Unix seconds and the last trade's price then (YES, Dots, decimal string). */
export interface PricePoint {
  t: number;
  p: string;
}

/** Candles of one market over a range, each period `minutes` long. */
export async function marketCandles(db: Queryable, marketId: string, range: PeriodRange): Promise<Candle[]> {
  if (periodCount(range) === 0) return [];
  const source = range.seconds % 86_400 === 0 ? 1440 : range.seconds % 3600 === 0 ? 60 : 1;
  const from = range.first - range.seconds;
  const [rows, before] = await Promise.all([
    repo.candlePeriods(db, marketId, source, range.seconds, from, range.last),
    repo.candleStateBefore(db, marketId, source, from),
  ]);
  return buildCandles(range, rows, before);
}

/**
 * A market's price history (`market`: its ticker or id): for each period of `fidelity` minutes ending in
 * [start, end] (Unix seconds), the period's end and the last trade's price by then; periods before the
 * market's first trade are left out. At most MAX_PERIODS periods (invalid_request beyond).
 */
export async function priceHistory(db: Queryable, market: string, range: { start: number; end: number }, fidelity: number, now: Date): Promise<PricePoint[]> {
  const periods = periodRange(range.start, range.end, fidelity, now);
  const found = await findMarket(db, marketRefOf(market));
  if (!found) throw notFound(`no market '${clip(marketRefOf(market), 40)}'`);
  const points: PricePoint[] = [];
  for (const candle of await marketCandles(db, String(found.id), periods)) {
    const p = candle.price?.close ?? candle.previous;
    if (p !== undefined) points.push({ t: candle.end, p });
  }
  return points;
}

/** The most tickers, and candles in all, of one request for several markets. */
const MAX_MARKETS = 100;
const MAX_BATCH_CANDLES = 10_000;

export interface CandleRequest {
  start: number;
  end: number;
  /** Minutes per period. */
  period: number;
}

/** The markets of these tickers (upper-cased, each once, in order); not_found naming those that are unknown. */
async function marketsOf(db: Queryable, tickers: readonly string[]) {
  const wanted = [...new Set(tickers.map(marketRefOf))];
  const found = new Map((await repo.findMarketsWithSeries(db, wanted)).map((m) => [m.ticker, m]));
  const unknown = wanted.filter((t) => !found.has(t));
  if (unknown.length > 0) throw notFound(`no market ${unknown.map((t) => `'${clip(t, 40)}'`).join(', ')}`);
  return wanted.map((t) => found.get(t)!);
}

/** A market's candles; not_found when no market has the ticker or it is not in that series. */
export async function getMarketCandles(db: Queryable, seriesTicker: string, ticker: string, request: CandleRequest, now: Date): Promise<{ ticker: string; candles: Candle[] }> {
  const range = periodRange(request.start, request.end, request.period, now);
  const [market] = await marketsOf(db, [ticker]);
  if (market!.series_ticker !== marketRefOf(seriesTicker)) throw notFound(`market '${market!.ticker}' is not in series '${clip(marketRefOf(seriesTicker), 40)}'`);
  return { ticker: market!.ticker, candles: await marketCandles(db, market!.id, range) };
}

/** Several markets' candles over one range: at most MAX_MARKETS markets and MAX_BATCH_CANDLES periods in all. */
export async function getMarketsCandles(db: Queryable, tickers: readonly string[], request: CandleRequest, now: Date): Promise<Array<{ ticker: string; candles: Candle[] }>> {
  const range = periodRange(request.start, request.end, request.period, now);
  const markets = await marketsOf(db, tickers);
  if (markets.length > MAX_MARKETS) throw invalid(`at most ${MAX_MARKETS} markets`);
  if (markets.length * periodCount(range) > MAX_BATCH_CANDLES) {
    throw invalid(`${markets.length} markets of ${periodCount(range)} periods are more than ${MAX_BATCH_CANDLES} candlesticks: shorten the range or take fewer markets`);
  }
  const candles = await Promise.all(markets.map((m) => marketCandles(db, m.id, range)));
  return markets.map((m, i) => ({ ticker: m.ticker, candles: candles[i]! }));
}

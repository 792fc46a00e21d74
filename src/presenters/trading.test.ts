import { describe, expect, it } from 'vitest';
import type { Candle } from '../domain/trading/candles.js';
import { candlesJson } from './trading.js';

const quote = { open: '0.40', low: '0.39', high: '0.45', close: '0.44' };
const wire = { open_dollars: '0.40', low_dollars: '0.39', high_dollars: '0.45', close_dollars: '0.44' };

describe('candlesJson', () => {
  it('writes each candle as MarketCandlestick, its price with trades, without, and before any', () => {
    const candles: Candle[] = [
      { end: 60, yesBid: quote, yesAsk: quote, volume: '0.00', openInterest: '0.00' },
      { end: 120, price: { ...quote, mean: '0.4125' }, previous: '0.41', yesBid: quote, yesAsk: quote, volume: '10.00', openInterest: '5.50' },
      { end: 180, previous: '0.44', yesBid: quote, yesAsk: quote, volume: '0.00', openInterest: '5.50' },
    ];
    const common = { yes_bid: wire, yes_ask: wire };
    expect(JSON.parse(candlesJson(candles))).toEqual([
      { end_period_ts: 60, ...common, price: {}, volume_fp: '0.00', open_interest_fp: '0.00' },
      { end_period_ts: 120, ...common, price: { ...wire, mean_dollars: '0.4125', previous_dollars: '0.41' }, volume_fp: '10.00', open_interest_fp: '5.50' },
      { end_period_ts: 180, ...common, price: { previous_dollars: '0.44' }, volume_fp: '0.00', open_interest_fp: '5.50' },
    ]);
    expect(candlesJson([])).toBe('[]');
  });
});

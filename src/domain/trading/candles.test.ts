import { describe, expect, it } from 'vitest';
import type { CandleRow, CandleState } from '../../db/repositories/candles.js';
import { buildCandles, MAX_PERIODS, periodRange } from './candles.js';

const NOW = new Date('2026-01-02T00:00:00Z');
const T0 = Date.parse('2026-01-01T00:00:00Z') / 1000;
const NOTHING: CandleState = { close: null, open_interest: null, yes_bid: null, yes_ask: null };

function row(end: number, fields: Partial<CandleRow>): CandleRow {
  return {
    end_ts: end,
    open: null,
    high: null,
    low: null,
    close: null,
    price_volume: '0',
    volume: '0',
    open_interest: '0',
    yes_bid: 0,
    yes_bid_low: 0,
    yes_bid_high: 0,
    yes_ask: 100,
    yes_ask_low: 100,
    yes_ask_high: 100,
    ...fields,
  };
}

describe('periodRange', () => {
  it('takes the periods ending in [start, end], aligned to the epoch', () => {
    expect(periodRange(T0 + 1, T0 + 3600, 1, NOW)).toEqual({ first: T0 + 60, last: T0 + 3600, seconds: 60 });
    expect(periodRange(T0, T0 + 86_399, 1440, NOW)).toEqual({ first: T0, last: T0, seconds: 86_400 });
    expect(periodRange(T0 + 10, T0 + 20, 60, NOW).last).toBeLessThan(periodRange(T0 + 10, T0 + 20, 60, NOW).first);
  });

  it('stops at the current period', () => {
    const now = new Date((T0 + 90) * 1000);
    expect(periodRange(T0, T0 + 86_400, 1, now)).toEqual({ first: T0, last: T0 + 120, seconds: 60 });
  });

  it('refuses a range that starts after it ends, and more than MAX_PERIODS periods', () => {
    expect(() => periodRange(T0 + 1, T0, 1, NOW)).toThrow(/starts after it ends/);
    expect(() => periodRange(T0 - MAX_PERIODS * 60, T0 - 60, 1, NOW)).not.toThrow();
    expect(() => periodRange(T0 - MAX_PERIODS * 60, T0, 1, NOW)).toThrow(/5001 periods, more than 5000/);
  });
});

describe('buildCandles', () => {
  const range = { first: T0 + 60, last: T0 + 300, seconds: 60 };

  it('leaves out periods before anything was recorded, and carries the last state through empty ones', () => {
    const rows = [
      row(T0 + 120, { open: 40, high: 45, low: 38, close: 42, price_volume: '8.200000', volume: '20', open_interest: '20', yes_bid: 41, yes_bid_low: 39, yes_bid_high: 41, yes_ask: 44, yes_ask_low: 44, yes_ask_high: 47 }),
      row(T0 + 240, { open: 50, high: 50, low: 50, close: 50, price_volume: '1.500000', volume: '3', open_interest: '23', yes_bid: 0, yes_bid_low: 0, yes_bid_high: 41, yes_ask: 100, yes_ask_low: 44, yes_ask_high: 100 }),
    ];
    const candles = buildCandles(range, rows, NOTHING);
    expect(candles.map((c) => c.end)).toEqual([T0 + 120, T0 + 180, T0 + 240, T0 + 300]);
    expect(candles[0]).toEqual({
      end: T0 + 120,
      price: { open: '0.40', low: '0.38', high: '0.45', close: '0.42', mean: '0.41' },
      yesBid: { open: '0.41', low: '0.39', high: '0.41', close: '0.41' },
      yesAsk: { open: '0.44', low: '0.44', high: '0.47', close: '0.44' },
      volume: '20.00',
      openInterest: '20.00',
    });
    expect(candles[1]).toEqual({
      end: T0 + 180,
      previous: '0.42',
      yesBid: { open: '0.41', low: '0.41', high: '0.41', close: '0.41' },
      yesAsk: { open: '0.44', low: '0.44', high: '0.44', close: '0.44' },
      volume: '0.00',
      openInterest: '20.00',
    });
    expect(candles[2]).toMatchObject({ previous: '0.42', price: { close: '0.50', mean: '0.50' }, yesBid: { open: '0.41', low: '0.00', close: '0.00' }, yesAsk: { open: '0.44', high: '1.00', close: '1.00' }, volume: '3.00', openInterest: '23.00' });
    expect(candles[3]).toMatchObject({ previous: '0.50', yesBid: { open: '0.00', close: '0.00' }, volume: '0.00', openInterest: '23.00' });
    expect(candles[3]!.price).toBeUndefined();
  });

  it('starts from the state before the range', () => {
    const candles = buildCandles(range, [], { close: 33, open_interest: '7.5', yes_bid: 30, yes_ask: 35 });
    expect(candles).toHaveLength(5);
    for (const c of candles) {
      expect(c).toEqual({
        end: c.end,
        previous: '0.33',
        yesBid: { open: '0.30', low: '0.30', high: '0.30', close: '0.30' },
        yesAsk: { open: '0.35', low: '0.35', high: '0.35', close: '0.35' },
        volume: '0.00',
        openInterest: '7.50',
      });
    }
  });

  it('weights the mean by contracts, to the micro-Dot, half up', () => {
    // 0.45 x 1 + 0.46 x 2 = 1.37 over 3 contracts: 0.456666...
    const [candle] = buildCandles(range, [row(T0 + 60, { open: 45, high: 46, low: 45, close: 46, price_volume: '1.370000', volume: '3', open_interest: '3' })], NOTHING);
    expect(candle!.price!.mean).toBe('0.456667');
    // fractional contracts: 0.01 x 0.0001 = 0.000001 over 0.0001 contracts.
    const [small] = buildCandles(range, [row(T0 + 60, { open: 1, high: 1, low: 1, close: 1, price_volume: '0.000001', volume: '0.0001', open_interest: '0' })], NOTHING);
    expect(small!.price!.mean).toBe('0.01');
    expect(small!.volume).toBe('0.0001');
  });

  it('shows bid and ask not recorded (rows from before candles were kept) as none', () => {
    const [candle] = buildCandles(range, [row(T0 + 60, { open: 45, high: 45, low: 45, close: 45, price_volume: '0.450000', volume: '1', open_interest: '1', yes_bid: null, yes_bid_low: null, yes_bid_high: null, yes_ask: null, yes_ask_low: null, yes_ask_high: null })], NOTHING);
    expect(candle!.yesBid).toEqual({ open: '0.00', low: '0.00', high: '0.00', close: '0.00' });
    expect(candle!.yesAsk).toEqual({ open: '1.00', low: '1.00', high: '1.00', close: '1.00' });
  });
});

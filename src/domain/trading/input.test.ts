import { describe, expect, it } from 'vitest';
import { DomainError } from '../errors.js';
import { orderIdOf, pageLimit, parseDecreaseCount, parsePlacement, parseStatuses, parseTerms, sideOf, ZERO_BUILDER_CODE } from './input.js';
import { formatMoney } from './money.js';

const NOW = new Date('2030-01-01T00:00:00Z');
const base = { ticker: 'M', side: 'yes' as const, count: '10', price: '0.45' };

function rejects(fn: () => unknown, message?: RegExp): void {
  try {
    fn();
  } catch (error) {
    expect(error).toBeInstanceOf(DomainError);
    expect((error as DomainError).code).toBe('invalid_request');
    if (message) expect((error as DomainError).message).toMatch(message);
    return;
  }
  throw new Error('expected a 400');
}

describe('order input', () => {
  it('reads sides with their aliases', () => {
    expect(sideOf('yes')).toBe('yes');
    expect(sideOf('bid')).toBe('yes');
    expect(sideOf('ask')).toBe('no');
    expect(sideOf('NO')).toBe('no');
    rejects(() => sideOf('maybe'), /side must be/);
  });

  it('defaults action buy, builder code zero, GTC, no flags', () => {
    expect(parsePlacement(base, NOW)).toEqual({
      ticker: 'M',
      side: 'yes',
      action: 'buy',
      price: 45,
      lots: 100_000n,
      builderCode: ZERO_BUILDER_CODE,
      timeInForce: 'GTC',
      clientOrderId: undefined,
      postOnly: false,
      reduceOnly: false,
      expiration: null,
    });
  });

  it.each([
    [{ price: '0' }, /price/],
    [{ price: '1.00' }, /price/],
    [{ price: '0.455' }, /price/],
    [{ price: '-0.1' }, /price/],
    [{ count: '0' }, /count/],
    [{ count: '0.00001' }, /count/],
    [{ count: '1e3' }, /count/],
    [{ side: 'up' }, /side/],
    [{ action: 'hold' }, /action/],
    [{ builder_code: '0x1234' }, /builder_code/],
    [{ type: 'MARKET' }, /type/],
    [{ time_in_force: 'DAY' }, /time_in_force/],
    [{ client_order_id: '' }, /client_order_id/],
    [{ reduce_only: true }, /reduce_only/],
    [{ expiration_ts: '2029-12-31T23:59:59Z' }, /future/],
    [{ expiration_ts: 'tomorrow' }, /expiration_ts/],
    [{ expiration_ts: '2030-01-02' }, /expiration_ts/],
    [{ ticker: '' }, /ticker/],
  ])('refuses %j', (change, message) => {
    rejects(() => parsePlacement({ ...base, ...(change as object) }, NOW), message);
  });

  it('accepts reduce-only sells, expirations with offsets or Unix seconds, builder codes and numbers', () => {
    const code = `0x${'ab'.repeat(32)}`;
    const placed = parsePlacement({ ...base, action: 'sell', reduce_only: true, expiration_ts: '2030-01-01T02:00:00+01:00', builder_code: code }, NOW);
    expect(placed).toMatchObject({ action: 'sell', reduceOnly: true, builderCode: code });
    expect(placed.expiration?.toISOString()).toBe('2030-01-01T01:00:00.000Z');
    expect(parsePlacement({ ...base, expiration_ts: String(NOW.getTime() / 1000 + 60) }, NOW).expiration?.toISOString()).toBe('2030-01-01T00:01:00.000Z');
    expect(parseTerms({ ...base, count: 12.5 as unknown as string, price: 0.3 as unknown as string })).toMatchObject({ lots: 125_000n, price: 30 });
    // Tickers are stored upper-case: any case names the market.
    expect(parseTerms({ ...base, ticker: ' fed-26dec-t4.25 ' }).ticker).toBe('FED-26DEC-T4.25');
  });

  it('reads statuses, limits and order ids', () => {
    expect(parseStatuses(['OPEN', 'PARTIAL'])).toEqual(['OPEN', 'PARTIAL']);
    expect(parseStatuses([])).toBeUndefined();
    rejects(() => parseStatuses(['LIVE']), /status/);
    expect(pageLimit(500)).toBe(100);
    expect(pageLimit(0)).toBe(1);
    expect(pageLimit(undefined as unknown as number)).toBe(20);
    expect(orderIdOf('0F8FAD5B-D9CB-469F-A165-70867728950E')).toBe('0f8fad5b-d9cb-469f-a165-70867728950e');
    expect(orderIdOf("1' or 1=1")).toBeUndefined();
    expect(orderIdOf(42)).toBeUndefined();
  });

  it('reads a decrease count: positive, on the quantum (zero is a cancel, not a decrease)', () => {
    expect(parseDecreaseCount('4.5')).toBe(45_000n);
    expect(parseDecreaseCount(2)).toBe(20_000n);
    rejects(() => parseDecreaseCount('0'), /new remaining count/);
    rejects(() => parseDecreaseCount('0.00005'), /new remaining count/);
    rejects(() => parseDecreaseCount(1e-7), /new remaining count/);
  });

  it('formats money exactly with two to six places', () => {
    expect(formatMoney(1_000_000_000n)).toBe('1000.00');
    expect(formatMoney(999_955_000n)).toBe('999.955');
    expect(formatMoney(1n)).toBe('0.000001');
    expect(formatMoney(0n)).toBe('0.00');
    expect(formatMoney(1_230_000n)).toBe('1.23');
  });
});

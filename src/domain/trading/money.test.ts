import { describe, expect, it } from 'vitest';
import { DomainError } from '../errors.js';
import {
  MAX_COUNT_LOTS,
  formatLots,
  formatMicroDots,
  formatStoredLots,
  formatTicks,
  lotsOf,
  notionalMicroDots,
  parseCountLots,
  parseMicroDots,
  parsePriceTicks,
  parseScaled,
} from './money.js';

const huge = '9'.repeat(1000);

describe('parsePriceTicks', () => {
  it.each([
    ['0.01', 1],
    ['0.99', 99],
    ['0.5', 50],
    ['0.45', 45],
    ['0.450', 45],
    ['00.45', 45],
  ])('%j -> %i ticks', (text, ticks) => {
    expect(parsePriceTicks(text)).toBe(ticks);
  });

  it.each(['0.00', '0', '1.00', '1', '0.015', '0.001', '1e-2', ' 0.5', '0.5 ', '', '.5', '5.', '-0.5', '+0.5', '0,5', '0x1', 'NaN', huge])(
    'rejects %j with invalid_request',
    (text) => {
      expect(() => parsePriceTicks(text)).toThrow(DomainError);
      expect(() => parsePriceTicks(text)).toThrow(/price/);
    },
  );

  it('rejects non-strings', () => {
    expect(() => parsePriceTicks(0.5 as never)).toThrow(DomainError);
  });
});

describe('parseCountLots', () => {
  it.each([
    ['12.5', 125_000n],
    ['12.50', 125_000n],
    ['12.50000', 125_000n],
    ['0.0001', 1n],
    ['1', 10_000n],
    ['1000000000', MAX_COUNT_LOTS],
  ])('%j -> %s lots', (text, lots) => {
    expect(parseCountLots(text)).toBe(lots);
  });

  it.each(['12.50001', '0.00001', '0', '0.0000', '-1', '1e3', ' 1', '', '1000000000.0001', '99999999999999999999', huge])(
    'rejects %j with invalid_request',
    (text) => {
      expect(() => parseCountLots(text)).toThrow(DomainError);
    },
  );
});

describe('parseMicroDots and parseScaled', () => {
  it('parses money to the micro-Dot, zero included', () => {
    expect(parseMicroDots('0')).toBe(0n);
    expect(parseMicroDots('1000')).toBe(1_000_000_000n);
    expect(parseMicroDots('0.000001')).toBe(1n);
    expect(() => parseMicroDots('0.0000001')).toThrow(DomainError);
    expect(() => parseMicroDots('-1')).toThrow(DomainError);
    expect(() => parseMicroDots(huge)).toThrow(DomainError);
  });

  it('keeps exactness: trailing zeros beyond the places are fine, other digits are not', () => {
    expect(parseScaled('1.2300', 2)).toBe(123n);
    expect(parseScaled('1.2301', 2)).toBeUndefined();
    expect(parseScaled('7', 0)).toBe(7n);
  });
});

describe('formatting', () => {
  it('prices', () => {
    expect(formatTicks(1)).toBe('0.01');
    expect(formatTicks(45)).toBe('0.45');
    expect(formatTicks(100)).toBe('1.00');
    expect(() => formatTicks(0.5)).toThrow(RangeError);
  });

  it('counts, exact, with optional minimum places', () => {
    expect(formatLots(125_000n)).toBe('12.5');
    expect(formatLots(1n)).toBe('0.0001');
    expect(formatLots(100_000n)).toBe('10');
    expect(formatLots(100_000n, 2)).toBe('10.00');
    expect(formatLots(123_456n, 2)).toBe('12.3456');
    expect(formatLots(0n, 4)).toBe('0.0000');
  });

  it('stored counts by their text as formatLots writes their lots, and refuses what is not one', () => {
    for (const text of ['0', '10', '10.5', '10.50', '0.0001', '12.3400', '1.000000', '123456789.1234', '7.10000000', '01.50']) {
      for (const places of [0, 2, 4]) expect(formatStoredLots(text, places)).toBe(formatLots(lotsOf(text), places));
    }
    for (const text of ['1.23456', '-1', '1e3', '', '.5']) expect(() => formatStoredLots(text, 2)).toThrow();
  });
  it('money with a fixed number of places, rounding half away from zero below 6', () => {
    expect(formatMicroDots(1n)).toBe('0.000001');
    expect(formatMicroDots(1_000_000_000n)).toBe('1000.000000');
    expect(formatMicroDots(1_234_567n, 2)).toBe('1.23');
    expect(formatMicroDots(1_235_000n, 2)).toBe('1.24');
    expect(formatMicroDots(1_234_999n, 2)).toBe('1.23');
    expect(formatMicroDots(-1_235_000n, 2)).toBe('-1.24');
    expect(formatMicroDots(-1n, 2)).toBe('0.00');
    expect(formatMicroDots(-1n)).toBe('-0.000001');
    expect(formatMicroDots(2_500_000n, 0)).toBe('3');
    expect(() => formatMicroDots(1n, 7)).toThrow(RangeError);
  });

  it('round-trips and multiplies exactly', () => {
    expect(notionalMicroDots(parsePriceTicks('0.45'), parseCountLots('12.5'))).toBe(parseMicroDots('5.625'));
    expect(formatMicroDots(notionalMicroDots(99, MAX_COUNT_LOTS))).toBe('990000000.000000');
    for (const text of ['0.0001', '3.1415', '12.5', '1000000000']) expect(formatLots(parseCountLots(text))).toBe(text);
  });
});

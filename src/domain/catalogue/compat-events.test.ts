import { describe, expect, it } from 'vitest';
import { DomainError } from '../errors.js';
import { encodeCursor } from '../pagination/cursor.js';
import {
  KEYSET_CURSOR_MAX_LENGTH,
  KEYSET_ORDER_KEYS,
  LIST_ORDER_KEYS,
  containsPattern,
  decodeKeysetCursor,
  encodeKeysetCursor,
  parseDateBound,
  parseDay,
  parseDecimalBound,
  parseOrderKey,
} from './compat-events.js';

describe('parseDateBound', () => {
  it.each([
    ['2026-11-22', '2026-11-22T00:00:00.000000Z'],
    ['2026-11-22 10:30:05', '2026-11-22T10:30:05.000000Z'],
    ['2026-11-22T10:30:05Z', '2026-11-22T10:30:05.000000Z'],
    ['2026-11-22t10:30:05z', '2026-11-22T10:30:05.000000Z'],
    ['2026-11-22T10:30:05.123456789Z', '2026-11-22T10:30:05.123457Z'],
    ['2026-11-22T10:30:05.000001Z', '2026-11-22T10:30:05.000001Z'],
    ['2026-11-22T23:59:59.9999991Z', '2026-11-23T00:00:00.000000Z'],
    ['2026-11-22T10:30:05+02:00', '2026-11-22T08:30:05.000000Z'],
    ['2026-11-22T23:30:00-01:00', '2026-11-23T00:30:00.000000Z'],
    ['2028-02-29', '2028-02-29T00:00:00.000000Z'],
    ['2000-02-29', '2000-02-29T00:00:00.000000Z'],
    ['0001-01-01', '0001-01-01T00:00:00.000000Z'],
    ['0099-06-15', '0099-06-15T00:00:00.000000Z'],
  ])('%s -> %s', (value, expected) => {
    expect(parseDateBound('start_date_min', value)).toBe(expected);
  });

  it('keeps microseconds, rounding a finer fraction in the bound\'s favour (up for _min, down for _max)', () => {
    expect(parseDateBound('end_date_max', '2026-11-22T10:30:05.123456789Z')).toBe('2026-11-22T10:30:05.123456Z');
    expect(parseDateBound('end_date_max', '2026-11-22T23:59:59.9999999Z')).toBe('2026-11-22T23:59:59.999999Z');
    expect(parseDateBound('start_time_min', '2026-11-22T10:30:05.0000001+01:00')).toBe('2026-11-22T09:30:05.000001Z');
    expect(parseDateBound('start_time_max', '2026-11-22T10:30:05.0000001+01:00')).toBe('2026-11-22T09:30:05.000000Z');
  });

  it.each(['', 'tomorrow', '2026-11-22T10:30Z', '2026-1-2', '2026-13-01', '2026-00-10', '2026-02-29', '1900-02-29', '2026-04-31',
    '2026-11-22T24:00:00Z', '2026-11-22T10:60:00Z', '2026-11-22T10:00:60Z', '2026-11-22T10:00:00+24:00', '2026-11-22T10:00:00+01:60',
    '0000-01-01', '0001-01-01T00:00:00+01:00', ' 2026-11-22', '2026-11-22 ', '20261122', '2026-11-22T10:00:00+0100'])(
    'refuses %j with a 400 naming the parameter', (value) => {
      try {
        parseDateBound('end_date_max', value);
        expect.unreachable();
      } catch (error) {
        expect(error).toBeInstanceOf(DomainError);
        expect((error as DomainError).code).toBe('invalid_request');
        expect((error as DomainError).details?.[0]?.path).toBe('end_date_max');
      }
    });
});

describe('parseDay', () => {
  it('takes a real day only', () => {
    expect(parseDay('event_date', '2026-11-22')).toBe('2026-11-22');
    for (const bad of ['2026-11-22T00:00:00Z', '2026-02-30', '22-11-2026']) expect(() => parseDay('event_date', bad)).toThrow(DomainError);
  });
});

describe('parseDecimalBound', () => {
  it('keeps the exact text of a decimal and refuses anything else', () => {
    for (const ok of ['0', '100.5', '-1', '+2', '.5', '5.', '1e3', '1.5E-8', '123456789012345678901234567890.123456789']) expect(parseDecimalBound('volume_min', ok)).toBe(ok);
    expect(parseDecimalBound('volume_min', undefined)).toBeUndefined();
    for (const bad of ['', 'abc', 'NaN', 'Infinity', '1e1000', '0x10', '1,5', '1 ', '--1', '.', '1'.repeat(65)]) expect(() => parseDecimalBound('volume_min', bad)).toThrow(DomainError);
  });
});

describe('containsPattern', () => {
  it('lower-cases and escapes LIKE metacharacters', () => {
    expect(containsPattern('Fed 100%_\\x')).toBe('%fed 100\\%\\_\\\\x%');
    expect(containsPattern("' or 1=1 --")).toBe("%' or 1=1 --%");
  });
});

describe('parseOrderKey', () => {
  it('takes the first key, falls back to the default and names the allowed keys on an unknown one', () => {
    expect(parseOrderKey(undefined, LIST_ORDER_KEYS, 'createdAt')).toEqual({ key: 'createdAt', column: 'created_at' });
    expect(parseOrderKey('', LIST_ORDER_KEYS, 'createdAt').column).toBe('created_at');
    expect(parseOrderKey('volume_24hr,id', LIST_ORDER_KEYS, 'createdAt').column).toBe('volume');
    expect(parseOrderKey('competitive', LIST_ORDER_KEYS, 'createdAt').column).toBe('liquidity');
    expect(parseOrderKey(' endDate ', KEYSET_ORDER_KEYS, 'id').column).toBe('strike_date');
    expect(() => parseOrderKey('ticker', KEYSET_ORDER_KEYS, 'id')).toThrow('order must be one of: id, slug, title, createdAt, updatedAt, endDate, volume, liquidity');
    expect(() => parseOrderKey('toString', LIST_ORDER_KEYS, 'id')).toThrow(DomainError);
    expect(() => parseOrderKey('__proto__', LIST_ORDER_KEYS, 'id')).toThrow(DomainError);
  });
});

describe('keyset cursors', () => {
  it('round-trip per ordering', () => {
    const row = { sort_value: '2026-11-22T10:00:00.123456Z', id: '42' };
    expect(decodeKeysetCursor('created_at', true, encodeKeysetCursor('created_at', true, row))).toEqual({ value: row.sort_value, id: 42 });
    expect(decodeKeysetCursor('id', false, encodeKeysetCursor('id', false, { sort_value: '7', id: '7' }))).toEqual({ value: '7', id: 7 });
    expect(decodeKeysetCursor('volume', true, encodeKeysetCursor('volume', true, { sort_value: '1520.50000000', id: '3' }))).toEqual({ value: '1520.50000000', id: 3 });
  });

  it('round-trips the longest title an event may have, whatever its characters', () => {
    // 300 characters (migration 0007); a control character takes 6 bytes of JSON, an emoji 4 bytes of UTF-8
    for (const ch of ['\u0001', '😀', '"', '中']) {
      const title = ch.repeat(300);
      const cursor = encodeKeysetCursor('title', false, { sort_value: title, id: String(Number.MAX_SAFE_INTEGER) });
      expect(cursor.length).toBeLessThanOrEqual(KEYSET_CURSOR_MAX_LENGTH);
      expect(decodeKeysetCursor('title', false, cursor)).toEqual({ value: title, id: Number.MAX_SAFE_INTEGER });
    }
  });

  it('refuses a cursor of another ordering or direction, and tampered keys', () => {
    const cursor = encodeKeysetCursor('title', true, { sort_value: 'A', id: '1' });
    expect(() => decodeKeysetCursor('title', false, cursor)).toThrow(DomainError);
    expect(() => decodeKeysetCursor('slug', true, cursor)).toThrow(DomainError);
    expect(() => decodeKeysetCursor('volume', true, encodeCursor('compat-events:volume:asc', ['NaN', 1]))).toThrow(DomainError);
    expect(() => decodeKeysetCursor('volume', true, encodeCursor('compat-events:volume:asc', ['1', -1]))).toThrow(DomainError);
    expect(() => decodeKeysetCursor('updated_at', true, encodeCursor('compat-events:updated_at:asc', ['yesterday', 1]))).toThrow(DomainError);
    expect(() => decodeKeysetCursor('updated_at', true, encodeCursor('compat-events:updated_at:asc', ['2026-02-30T00:00:00.000000Z', 1]))).toThrow(DomainError);
    expect(() => decodeKeysetCursor('title', true, encodeCursor('compat-events:title:asc', ['A\u0000', 1]))).toThrow(DomainError);
    try {
      decodeKeysetCursor('id', true, 'nope!');
      expect.unreachable();
    } catch (error) {
      expect((error as DomainError).details?.[0]?.path).toBe('after_cursor');
    }
  });
});

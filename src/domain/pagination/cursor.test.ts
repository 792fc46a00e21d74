import { describe, expect, it } from 'vitest';
import { DomainError } from '../errors.js';
import { decodeCursor, encodeCursor, splitPage } from './cursor.js';

const raw = (value: unknown) => Buffer.from(JSON.stringify(value)).toString('base64url');

describe('cursor', () => {
  it('round-trips a key', () => {
    const key = ['2026-11-22T10:00:00.123456Z', '3f0b8f0e-6a8e-4c55-9d0f-2b1c7c1f5a11'];
    expect(decodeCursor('accounts', encodeCursor('accounts', key), ['timestamp', 'uuid'])).toEqual(key);
    expect(decodeCursor('events', encodeCursor('events', [42, 'abc']), ['integer', 'text'])).toEqual([42, 'abc']);
  });

  it.each([
    ['garbage', 'not a cursor!'],
    ['non-JSON base64', Buffer.from('hello').toString('base64url')],
    ['another collection', encodeCursor('orders', [1])],
    ['another version', raw({ v: 2, c: 'events', k: [1] })],
    ['the wrong arity', encodeCursor('events', [1, 2])],
    ['the wrong part type', encodeCursor('events', ['1'])],
    ['a fractional integer', raw({ v: 1, c: 'events', k: [1.5] })],
    ['an oversized cursor', 'a'.repeat(2000)],
    ['null', raw(null)],
  ])('refuses %s as invalid input', (_, cursor) => {
    expect(() => decodeCursor('events', cursor, ['integer'])).toThrow(DomainError);
  });

  it('refuses a malformed timestamp or uuid part', () => {
    expect(() => decodeCursor('a', encodeCursor('a', ['2026-13-45T99:00:00Z']), ['timestamp'])).toThrow(DomainError);
    // dates JavaScript rolls over or accepts but PostgreSQL refuses
    for (const value of ['2026-02-30T00:00:00Z', '2026-02-29T00:00:00Z', '2026-04-31T12:00:00.5Z', '2026-11-22T24:00:00Z', '0000-01-01T00:00:00Z']) {
      expect(() => decodeCursor('a', encodeCursor('a', [value]), ['timestamp']), value).toThrow(DomainError);
    }
    expect(decodeCursor('a', encodeCursor('a', ['2028-02-29T23:59:59.999999Z']), ['timestamp'])).toEqual(['2028-02-29T23:59:59.999999Z']);
    expect(() => decodeCursor('a', encodeCursor('a', ["1' or 1=1"]), ['uuid'])).toThrow(DomainError);
  });

  it('refuses NUL in a text part, and cursors longer than the collection allows', () => {
    expect(() => decodeCursor('a', encodeCursor('a', ['x\u0000']), ['text'])).toThrow(DomainError);
    const long = encodeCursor('a', ['x'.repeat(1500)]);
    expect(() => decodeCursor('a', long, ['text'])).toThrow(DomainError);
    expect(decodeCursor('a', long, ['text'], { maxLength: 4096 })).toEqual(['x'.repeat(1500)]);
  });

  it('splits a page fetched with one extra row', () => {
    expect(splitPage([1, 2, 3], 2)).toEqual({ items: [1, 2], hasMore: true });
    expect(splitPage([1, 2], 2)).toEqual({ items: [1, 2], hasMore: false });
  });
});

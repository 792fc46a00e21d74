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
    expect(() => decodeCursor('a', encodeCursor('a', ["1' or 1=1"]), ['uuid'])).toThrow(DomainError);
  });

  it('splits a page fetched with one extra row', () => {
    expect(splitPage([1, 2, 3], 2)).toEqual({ items: [1, 2], hasMore: true });
    expect(splitPage([1, 2], 2)).toEqual({ items: [1, 2], hasMore: false });
  });
});

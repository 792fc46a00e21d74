import { createHash } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { cancelAnswer, cursorKey, END_CURSOR, FIRST_CURSOR, halfTicksText, nextCursor, orderTypeOf, tokenBook, withHash } from './views.js';

describe('page cursors', () => {
  it('reads the first page from nothing or MA==, the end from LTE=, and the next page from a key', () => {
    expect(cursorKey(undefined)).toBeUndefined();
    expect(cursorKey(FIRST_CURSOR)).toBeUndefined();
    expect(cursorKey(END_CURSOR)).toBe('end');
    expect(cursorKey(nextCursor('4096', true))).toBe(4096n);
    expect(nextCursor('4096', false)).toBe(END_CURSOR);
    expect(nextCursor(undefined, true)).toBe(END_CURSOR);
  });

  it('refuses anything else', () => {
    for (const bad of ['x', Buffer.from('-5').toString('base64'), Buffer.from('12a').toString('base64'), '%%%']) expect(() => cursorKey(bad)).toThrow(/next_cursor/);
  });
});

describe('tokenBook', () => {
  const levels = [
    { book_side: 'bid' as const, yes_price: '0.49', count: '10.0000' },
    { book_side: 'bid' as const, yes_price: '0.40', count: '2.5000' },
    { book_side: 'ask' as const, yes_price: '0.51', count: '7.0000' },
    { book_side: 'ask' as const, yes_price: '0.60', count: '1.0000' },
  ];

  it('gives the YES token the book as it is, bids ascending and asks descending (best last)', () => {
    const book = tokenBook('yes', levels);
    expect(book.bids).toEqual([{ price: '0.40', size: '2.5' }, { price: '0.49', size: '10' }]);
    expect(book.asks).toEqual([{ price: '0.60', size: '1' }, { price: '0.51', size: '7' }]);
    expect(book.top).toEqual({ bid: 49, ask: 51 });
  });

  it('gives the NO token the YES asks as its bids at 1 - p, and the YES bids as its asks', () => {
    const book = tokenBook('no', levels);
    expect(book.bids).toEqual([{ price: '0.40', size: '1' }, { price: '0.49', size: '7' }]);
    expect(book.asks).toEqual([{ price: '0.60', size: '2.5' }, { price: '0.51', size: '10' }]);
    expect(book.top).toEqual({ bid: 49, ask: 51 });
    expect(tokenBook('no', []).top).toEqual({ bid: undefined, ask: undefined });
  });
});

describe('the client shapes', () => {
  it('writes midpoints exactly', () => {
    expect(halfTicksText(100)).toBe('0.5');
    expect(halfTicksText(99)).toBe('0.495');
    expect(halfTicksText(2)).toBe('0.01');
  });

  it('names order types as the client does', () => {
    expect(orderTypeOf({ time_in_force: 'GTC', expiration_ts: null })).toBe('GTC');
    expect(orderTypeOf({ time_in_force: 'GTC', expiration_ts: new Date() })).toBe('GTD');
    expect(orderTypeOf({ time_in_force: 'IOC', expiration_ts: null })).toBe('FAK');
    expect(orderTypeOf({ time_in_force: 'FOK', expiration_ts: null })).toBe('FOK');
  });

  it('hashes a book summary as the client does: SHA-1 of its JSON with the hash empty', () => {
    const summary = withHash({ market: '0x01', asset_id: '1', timestamp: '0', bids: [], asks: [], min_order_size: '0.0001', tick_size: '0.01', neg_risk: false, last_trade_price: '0' });
    expect(summary.hash).toBe(createHash('sha1').update(JSON.stringify({ ...summary, hash: '' })).digest('hex'));
    expect(withHash({ ...summary, last_trade_price: '0.5' }).hash).not.toBe(summary.hash);
  });

  it('answers cancels as the client reads them', () => {
    expect(cancelAnswer([{ order_id: 'a', status: 'cancelled' }, { order_id: 'b', error: 'not live' }])).toEqual({ canceled: ['a'], not_canceled: { b: 'not live' } });
  });
});

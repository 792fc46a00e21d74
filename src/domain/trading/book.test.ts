import { describe, expect, it } from 'vitest';
import { type Fill, type MatchOptions, type Order, OrderBook, fillCash, match } from './book.js';
import { formatLots, formatTicks, parseCountLots, parseMicroDots, parsePriceTicks } from './money.js';
import type { Action, Outcome } from '../../db/tables.js';

/**
 * Table-style scenarios: book before, incoming order, expected fills, book after.
 * Orders are written 'id:account action side price count', e.g. 's1:A sell yes 0.45 10'; book
 * orders get sequences in the order listed, the incoming order comes later.
 */
function order(spec: string, sequence: bigint): Order {
  const m = /^(\w+):(\w+) (buy|sell) (yes|no) (\S+) (\S+)$/.exec(spec);
  if (!m) throw new Error(`bad order spec ${spec}`);
  const [, id, accountId, action, side, price, count] = m as unknown as [string, string, string, Action, Outcome, string, string];
  return { id, accountId, action, side, price: parsePriceTicks(price), remaining: parseCountLots(count), sequence };
}

const bookOf = (specs: string[]) => new OrderBook(specs.map((s, i) => order(s, BigInt(i + 1))));

// 'maker<-taker count @yesPrice kind m<maker price> t<taker price>'
const describeFill = (f: Fill) =>
  `${f.maker.orderId}<-${f.taker.orderId} ${formatLots(f.lots)} @${formatTicks(f.yesPrice)} ${f.kind} m${formatTicks(f.maker.price)} t${formatTicks(f.taker.price)}`;

// Resting orders in book order (bids best first, then asks best first): 'id count'.
const contents = (book: OrderBook) => book.orders().map((o) => `${o.id} ${formatLots(o.remaining)}`);

interface Scenario {
  name: string;
  book: string[];
  incoming: string;
  options?: Partial<MatchOptions>;
  fills: string[];
  after: string[];
  resting?: string;
  cancelled?: string;
  selfTradeCancelled?: string[];
  rejected?: 'post_only_would_cross' | 'fok_not_fillable';
  /** Total price improvement of a buying taker, Dots. */
  improvement?: string;
}

const scenarios: Scenario[] = [
  {
    name: 'YES changes hands: buy YES meets a resting sell YES',
    book: ['s1:A sell yes 0.45 10'],
    incoming: 't:B buy yes 0.45 10',
    fills: ['s1<-t 10 @0.45 transfer_yes m0.45 t0.45'],
    after: [],
  },
  {
    name: 'NO changes hands: buy NO at 0.40 (ask 60) meets sell NO at 0.40 (bid 60)',
    book: ['s1:A sell no 0.40 10'],
    incoming: 't:B buy no 0.40 4',
    fills: ['s1<-t 4 @0.60 transfer_no m0.40 t0.40'],
    after: ['s1 6'],
  },
  {
    name: 'mint: buy NO at 0.40 meets buy YES at 0.60; the buyers pay 0.60 + 0.40',
    book: ['b1:A buy yes 0.60 10'],
    incoming: 't:B buy no 0.40 10',
    fills: ['b1<-t 10 @0.60 mint m0.60 t0.40'],
    after: [],
  },
  {
    name: 'merge: sell NO at 0.45 meets sell YES at 0.55; the sellers receive 0.55 + 0.45',
    book: ['s1:A sell yes 0.55 10'],
    incoming: 't:B sell no 0.45 3',
    fills: ['s1<-t 3 @0.55 merge m0.55 t0.45'],
    after: ['s1 7'],
  },
  {
    name: 'walks several levels at the makers\' prices, rests the rest (GTC), reports price improvement',
    book: ['s3:A sell yes 0.58 5', 's1:A sell yes 0.55 5', 's2:C buy no 0.44 5'],
    incoming: 't:B buy yes 0.57 12',
    fills: ['s1<-t 5 @0.55 transfer_yes m0.55 t0.55', 's2<-t 5 @0.56 mint m0.44 t0.56'],
    after: ['t 2', 's3 5'],
    resting: '2',
    improvement: '0.15', // (0.57 - 0.55) x 5 + (0.57 - 0.56) x 5
  },
  {
    name: 'price-time priority within a level',
    book: ['s1:A sell yes 0.50 3', 's2:C sell yes 0.50 3', 's3:D buy no 0.50 3'],
    incoming: 't:B buy yes 0.50 5',
    fills: ['s1<-t 3 @0.50 transfer_yes m0.50 t0.50', 's2<-t 2 @0.50 transfer_yes m0.50 t0.50'],
    after: ['s2 1', 's3 3'],
  },
  {
    name: 'better price beats earlier time',
    book: ['s1:A sell yes 0.52 3', 's2:C sell yes 0.51 3'],
    incoming: 't:B buy yes 0.52 4',
    fills: ['s2<-t 3 @0.51 transfer_yes m0.51 t0.51', 's1<-t 1 @0.52 transfer_yes m0.52 t0.52'],
    after: ['s1 2'],
    improvement: '0.03',
  },
  {
    name: 'a buy NO taker trades at the maker\'s price, below its limit, and is told the saving',
    book: ['b1:A buy yes 0.65 10'],
    incoming: 't:B buy no 0.40 10',
    fills: ['b1<-t 10 @0.65 mint m0.65 t0.35'],
    after: [],
    improvement: '0.50',
  },
  {
    name: 'a selling taker gets the maker\'s better price; nothing to release',
    book: ['b1:A buy yes 0.65 10'],
    incoming: 't:B sell yes 0.60 10',
    fills: ['b1<-t 10 @0.65 transfer_yes m0.65 t0.65'],
    after: [],
    improvement: '0',
  },
  {
    name: 'no cross: a GTC order rests untouched',
    book: ['s1:A sell yes 0.55 10', 'b1:C buy yes 0.40 1'],
    incoming: 't:B buy yes 0.50 10',
    fills: [],
    after: ['t 10', 'b1 1', 's1 10'],
    resting: '10',
  },
  {
    name: 'IOC: the unfilled remainder is cancelled',
    book: ['s1:A sell yes 0.50 4', 's2:A sell yes 0.60 4'],
    incoming: 't:B buy yes 0.55 10',
    options: { timeInForce: 'IOC' },
    fills: ['s1<-t 4 @0.50 transfer_yes m0.50 t0.50'],
    after: ['s2 4'],
    cancelled: '6',
  },
  {
    name: 'FOK: fills entirely across levels',
    book: ['s1:A sell yes 0.50 4', 's2:C buy no 0.49 4', 's3:A sell yes 0.52 4'],
    incoming: 't:B buy yes 0.51 8',
    options: { timeInForce: 'FOK' },
    fills: ['s1<-t 4 @0.50 transfer_yes m0.50 t0.50', 's2<-t 4 @0.51 mint m0.49 t0.51'],
    after: ['s3 4'],
    improvement: '0.04',
  },
  {
    name: 'FOK: killed when not all fillable; the book is unchanged (own orders do not count, are not cancelled)',
    book: ['s1:A sell yes 0.50 5', 's2:B sell yes 0.50 5', 's3:A sell yes 0.60 5'],
    incoming: 't:B buy yes 0.55 8',
    options: { timeInForce: 'FOK' },
    fills: [],
    after: ['s1 5', 's2 5', 's3 5'],
    cancelled: '8',
    rejected: 'fok_not_fillable',
  },
  {
    name: 'post-only: rejected when it would cross; the book is unchanged',
    book: ['b1:A buy yes 0.60 5'],
    incoming: 't:B buy no 0.45 5', // ask at 0.55 <= bid 0.60
    options: { postOnly: true },
    fills: [],
    after: ['b1 5'],
    cancelled: '5',
    rejected: 'post_only_would_cross',
  },
  {
    name: 'post-only: rejected even when only its own account\'s order crosses',
    book: ['s1:B sell yes 0.50 5'],
    incoming: 't:B buy yes 0.50 5',
    options: { postOnly: true },
    fills: [],
    after: ['s1 5'],
    cancelled: '5',
    rejected: 'post_only_would_cross',
  },
  {
    name: 'post-only: rests when it does not cross',
    book: ['b1:A buy yes 0.60 5'],
    incoming: 't:B buy no 0.39 5', // ask at 0.61
    options: { postOnly: true },
    fills: [],
    after: ['b1 5', 't 5'],
    resting: '5',
  },
  {
    name: 'self-trade prevention: own resting orders met are cancelled and matching continues',
    book: ['s1:B sell yes 0.50 5', 's2:A sell yes 0.50 5', 's3:B buy no 0.50 5', 's4:C sell yes 0.51 5', 's5:B sell yes 0.60 5'],
    incoming: 't:B buy yes 0.51 8',
    fills: ['s2<-t 5 @0.50 transfer_yes m0.50 t0.50', 's4<-t 3 @0.51 transfer_yes m0.51 t0.51'],
    after: ['s4 2', 's5 5'],
    selfTradeCancelled: ['s1', 's3'],
    improvement: '0.05',
  },
  {
    name: 'self-trade prevention: own orders beyond what is needed stay',
    book: ['s1:A sell yes 0.50 5', 's2:B sell yes 0.50 5'],
    incoming: 't:B buy yes 0.50 5',
    fills: ['s1<-t 5 @0.50 transfer_yes m0.50 t0.50'],
    after: ['s2 5'],
  },
  {
    name: 'self-trade prevention: after cancelling its own crossing order the remainder rests',
    book: ['s1:B sell yes 0.50 5'],
    incoming: 't:B buy yes 0.55 2.5',
    fills: [],
    after: ['t 2.5'],
    resting: '2.5',
    selfTradeCancelled: ['s1'],
  },
];

describe('match scenarios', () => {
  it.each(scenarios)('$name', (s) => {
    const book = bookOf(s.book);
    const incoming = order(s.incoming, 1000n);
    const result = match(book, incoming, { timeInForce: 'GTC', ...s.options });
    book.validateInternalState();
    expect(result.fills.map(describeFill)).toEqual(s.fills);
    expect(contents(book)).toEqual(s.after);
    expect(result.selfTradeCancelled.map((o) => o.id)).toEqual(s.selfTradeCancelled ?? []);
    expect(result.rejected).toBe(s.rejected);
    expect(formatLots(result.restingRemainder)).toBe(s.resting ?? '0');
    expect(formatLots(result.cancelledRemainder)).toBe(s.cancelled ?? '0');
    expect(result.filled).toBe(result.fills.reduce((sum, f) => sum + f.lots, 0n));
    expect(result.filled + result.restingRemainder + result.cancelledRemainder).toBe(incoming.remaining);
    expect(result.priceImprovement).toBe(result.fills.reduce((sum, f) => sum + f.takerPriceImprovement, 0n));
    if (s.improvement !== undefined) expect(result.priceImprovement).toBe(parseMicroDots(s.improvement));
  });

  it('reports the resting order as it was when cancelled for self-trade', () => {
    const book = bookOf(['s1:B sell yes 0.50 5']);
    book.decrease('s1', parseCountLots('3'));
    const result = match(book, order('t:B buy yes 0.50 1', 10n), { timeInForce: 'IOC' });
    expect(result.selfTradeCancelled).toEqual([
      { id: 's1', accountId: 'B', side: 'yes', action: 'sell', price: 50, remaining: 30_000n, sequence: 1n },
    ]);
    expect(book.size).toBe(0);
  });

  it('fill cash: a mint costs exactly 1 Dot per contract, a merge pays it, a transfer nets to zero', () => {
    const mint = match(bookOf(['b1:A buy yes 0.63 2']), order('t:B buy no 0.40 2', 9n), { timeInForce: 'GTC' }).fills[0]!;
    expect(fillCash(mint)).toEqual({ maker: -1_260_000n, taker: -740_000n });
    const merge = match(bookOf(['s1:A sell no 0.30 2']), order('t:B sell yes 0.60 2', 9n), { timeInForce: 'GTC' }).fills[0]!;
    expect(fillCash(merge)).toEqual({ maker: 600_000n, taker: 1_400_000n });
    const transfer = match(bookOf(['s1:A sell no 0.30 2']), order('t:B buy no 0.31 2', 9n), { timeInForce: 'GTC' }).fills[0]!;
    expect(fillCash(transfer)).toEqual({ maker: 600_000n, taker: -600_000n });
  });

  it('refuses an incoming order already in the book, and an invalid one', () => {
    const book = bookOf(['s1:A sell yes 0.50 5']);
    expect(() => match(book, order('s1:A sell yes 0.50 5', 5n), { timeInForce: 'GTC' })).toThrow(/already/);
    expect(() => match(book, { ...order('t:B buy yes 0.50 5', 5n), remaining: 0n }, { timeInForce: 'GTC' })).toThrow(/remaining/);
    expect(() => match(book, { ...order('t:B buy yes 0.50 5', 5n), price: 100 }, { timeInForce: 'GTC' })).toThrow(/price/);
    expect(() => match(book, order('t:B buy yes 0.50 5', 5n), { timeInForce: 'DAY' as never })).toThrow(/time in force/);
    expect(contents(book)).toEqual(['s1 5']);
  });
});

describe('OrderBook', () => {
  it('decrease keeps time priority', () => {
    const book = bookOf(['s1:A sell yes 0.50 10', 's2:C sell yes 0.50 10']);
    expect(book.decrease('s1', parseCountLots('2')).remaining).toBe(20_000n);
    book.validateInternalState();
    const result = match(book, order('t:B buy yes 0.50 3', 10n), { timeInForce: 'GTC' });
    expect(result.fills.map(describeFill)).toEqual([
      's1<-t 2 @0.50 transfer_yes m0.50 t0.50',
      's2<-t 1 @0.50 transfer_yes m0.50 t0.50',
    ]);
    expect(contents(book)).toEqual(['s2 9']);
  });

  it('decrease accepts only a smaller positive remainder of a resting order', () => {
    const book = bookOf(['s1:A sell yes 0.50 1']);
    expect(() => book.decrease('s1', 10_000n)).toThrow(RangeError);
    expect(() => book.decrease('s1', 0n)).toThrow(RangeError);
    expect(() => book.decrease('nope', 1n)).toThrow(/not in the book/);
    expect(contents(book)).toEqual(['s1 1']);
  });

  it('remove takes an order out and moves the best price', () => {
    const book = bookOf(['b1:A buy yes 0.45 1', 'b2:A buy yes 0.40 1', 's1:A sell no 0.40 1']);
    expect(book.bestBid()).toBe(60);
    expect(book.remove('s1')).toEqual({ id: 's1', accountId: 'A', side: 'no', action: 'sell', price: 40, remaining: 10_000n, sequence: 3n });
    expect(book.bestBid()).toBe(45);
    expect(book.remove('s1')).toBeUndefined();
    expect(book.get('s1')).toBeUndefined();
    book.remove('b1');
    book.remove('b2');
    expect(book.bestBid()).toBeUndefined();
    expect(book.size).toBe(0);
    book.validateInternalState();
  });

  it('depth: YES bids are the bids; NO bids are the asks seen at 1 - p; best first', () => {
    const book = bookOf([
      'a:A buy yes 0.40 1',
      'b:A buy yes 0.45 2',
      'c:A sell no 0.50 3', // bid at 0.50
      'd:A buy no 0.30 4', // ask at 0.70
      'e:A sell yes 0.65 5', // ask at 0.65
      'f:A buy no 0.35 1', // ask at 0.65
    ]);
    expect(book.depth()).toEqual({
      yes: [[50, 30_000n], [45, 20_000n], [40, 10_000n]],
      no: [[35, 60_000n], [30, 40_000n]],
    });
    expect(book.depth(1)).toEqual({ yes: [[50, 30_000n]], no: [[35, 60_000n]] });
    expect(book.bids().map((l) => l.price)).toEqual([50, 45, 40]);
    expect(book.asks().map((l) => [l.price, l.orders.map((o) => o.id)])).toEqual([[65, ['e', 'f']], [70, ['d']]]);
  });

  it('loads orders in any order and queues each level by sequence', () => {
    const book = new OrderBook([
      order('c:C sell yes 0.50 1', 30n),
      order('a:A sell yes 0.50 1', 10n),
      order('b:B buy no 0.50 1', 20n),
    ]);
    book.validateInternalState();
    expect(book.orders().map((o) => o.id)).toEqual(['a', 'b', 'c']);
    expect(() => book.add(order('d:D sell yes 0.50 1', 20n))).toThrow(/sequence/);
  });

  it('refuses duplicates, crossing orders and invalid orders on add', () => {
    const book = bookOf(['s1:A sell yes 0.50 1', 'b1:A buy yes 0.40 1']);
    expect(() => book.add(order('s1:A sell yes 0.55 1', 5n))).toThrow(/already/);
    expect(() => book.add(order('x:A buy yes 0.50 1', 5n))).toThrow(/cross/);
    expect(() => book.add(order('x:A sell no 0.50 1', 5n))).toThrow(/cross/);
    expect(() => book.add(order('x:A sell yes 0.40 1', 5n))).toThrow(/cross/);
    expect(() => book.add({ ...order('x:A buy yes 0.45 1', 5n), price: 45.5 })).toThrow(/price/);
    expect(() => book.add({ ...order('x:A buy yes 0.45 1', 5n), side: 'maybe' as never })).toThrow(/side/);
    expect(() => book.add({ ...order('x:A buy yes 0.45 1', 5n), remaining: -1n })).toThrow(/remaining/);
    expect(() => book.add({ ...order('x:A buy yes 0.45 1', 5n), accountId: '' })).toThrow(/accountId/);
    expect(contents(book)).toEqual(['b1 1', 's1 1']);
    book.validateInternalState();
  });

  it('returns copies: changing a returned order does not touch the book', () => {
    const book = bookOf(['s1:A sell yes 0.50 1']);
    const got = book.get('s1') as { remaining: bigint };
    got.remaining = 5n;
    expect(book.get('s1')!.remaining).toBe(10_000n);
    book.validateInternalState();
  });
});

import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type { Action, Outcome } from '../../db/tables.js';
import {
  type Fill,
  type MatchOptions,
  type MatchResult,
  type Order,
  OrderBook,
  bookSideOf,
  fillCash,
  match,
  yesPriceOf,
} from './book.js';

/**
 * Random sequences of orders, cancels and decreases from a few accounts against one book. After
 * every step the book checks itself, every fill obeys the money rules, every order's lots are
 * accounted for, and the result equals that of a naive reference matcher (sort and scan).
 */

type Command =
  | { kind: 'place'; accountId: string; side: Outcome; action: Action; price: number; lots: bigint; options: MatchOptions }
  | { kind: 'cancel'; pick: number }
  | { kind: 'decrease'; pick: number; fraction: number };

const price = fc.oneof(
  { weight: 4, arbitrary: fc.integer({ min: 45, max: 55 }) }, // dense: plenty of crossing
  { weight: 1, arbitrary: fc.integer({ min: 1, max: 99 }) },
);

const command: fc.Arbitrary<Command> = fc.oneof(
  {
    weight: 8,
    arbitrary: fc.record({
      kind: fc.constant('place' as const),
      accountId: fc.constantFrom('A', 'B', 'C'),
      side: fc.constantFrom<Outcome>('yes', 'no'),
      action: fc.constantFrom<Action>('buy', 'sell'),
      price,
      lots: fc.bigInt({ min: 1n, max: 40n }),
      options: fc.record({
        timeInForce: fc.constantFrom('GTC' as const, 'GTC' as const, 'IOC' as const, 'FOK' as const),
        postOnly: fc.constantFrom(false, false, false, false, false, true),
      }),
    }),
  },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant('cancel' as const), pick: fc.nat() }) },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant('decrease' as const), pick: fc.nat(), fraction: fc.double({ min: 0, max: 1, noNaN: true }) }) },
);

// Per order: what it started with, what filled, and what was taken away otherwise.
interface Ledger {
  original: bigint;
  filled: bigint;
  removed: bigint;
}

/** Reference matcher: the same rules written the obvious way, over a plain array. */
function referenceMatch(resting: Order[], incoming: Order, options: MatchOptions) {
  const takerSide = bookSideOf(incoming.side, incoming.action);
  const limit = yesPriceOf(incoming.side, incoming.price);
  const yes = (o: Order) => yesPriceOf(o.side, o.price);
  const candidates = resting
    .filter((o) => bookSideOf(o.side, o.action) !== takerSide && (takerSide === 'bid' ? yes(o) <= limit : yes(o) >= limit))
    .sort((a, b) => (takerSide === 'bid' ? yes(a) - yes(b) : yes(b) - yes(a)) || (a.sequence < b.sequence ? -1 : 1));
  if (options.postOnly && candidates.length > 0) return { rejected: true, fills: [], stp: [], resting };
  const available = candidates.filter((o) => o.accountId !== incoming.accountId).reduce((s, o) => s + o.remaining, 0n);
  if (options.timeInForce === 'FOK' && available < incoming.remaining) return { rejected: true, fills: [], stp: [], resting };
  let remaining = incoming.remaining;
  const fills: string[] = [];
  const stp: string[] = [];
  const left = new Map(resting.map((o) => [o.id, o.remaining]));
  for (const o of candidates) {
    if (remaining === 0n) break;
    if (o.accountId === incoming.accountId) {
      stp.push(o.id);
      left.delete(o.id);
      continue;
    }
    const lots = o.remaining < remaining ? o.remaining : remaining;
    fills.push(`${o.id} ${lots} @${yes(o)}`);
    remaining -= lots;
    if (lots === o.remaining) left.delete(o.id);
    else left.set(o.id, o.remaining - lots);
  }
  const after = resting.filter((o) => left.has(o.id)).map((o) => ({ ...o, remaining: left.get(o.id)! }));
  if (remaining > 0n && options.timeInForce === 'GTC') after.push({ ...incoming, remaining });
  return { rejected: false, fills, stp, resting: after };
}

const byId = (orders: Order[]) => orders.map((o) => `${o.id}:${o.remaining}`).sort();

function checkFill(fill: Fill, incoming: Order, makerOrder: Order): void {
  expect(fill.taker.orderId).toBe(incoming.id);
  expect(fill.maker.accountId).not.toBe(fill.taker.accountId);
  expect(fill.lots).toBeGreaterThan(0n);
  // At the maker's price.
  expect(fill.maker.price).toBe(makerOrder.price);
  expect(fill.yesPrice).toBe(yesPriceOf(makerOrder.side, makerOrder.price));
  expect(fill.taker.price).toBe(yesPriceOf(incoming.side, fill.yesPrice));
  // Never worse than the taker's limit; a buyer's saving is reported exactly.
  if (incoming.action === 'buy') {
    expect(fill.taker.price).toBeLessThanOrEqual(incoming.price);
    expect(fill.takerPriceImprovement).toBe(BigInt(incoming.price - fill.taker.price) * fill.lots);
  } else {
    expect(fill.taker.price).toBeGreaterThanOrEqual(incoming.price);
    expect(fill.takerPriceImprovement).toBe(0n);
  }
  // Conservation of money per fill.
  const cash = fillCash(fill);
  const pair = 100n * fill.lots;
  if (fill.kind === 'mint') {
    expect([fill.maker.action, fill.taker.action]).toEqual(['buy', 'buy']);
    expect(fill.maker.side).not.toBe(fill.taker.side);
    expect(-(cash.maker + cash.taker)).toBe(pair);
  } else if (fill.kind === 'merge') {
    expect([fill.maker.action, fill.taker.action]).toEqual(['sell', 'sell']);
    expect(fill.maker.side).not.toBe(fill.taker.side);
    expect(cash.maker + cash.taker).toBe(pair);
  } else {
    expect(fill.kind).toBe(`transfer_${fill.taker.side}`);
    expect(fill.maker.side).toBe(fill.taker.side);
    expect(fill.maker.action).not.toBe(fill.taker.action);
    expect(fill.maker.price).toBe(fill.taker.price);
    expect(cash.maker + cash.taker).toBe(0n); // the buyer pays exactly what the seller receives
  }
}

function run(commands: Command[]): void {
  const book = new OrderBook();
  const ledger = new Map<string, Ledger>();
  let sequence = 0n;

  for (const cmd of commands) {
    const live = book.orders();
    if (cmd.kind === 'cancel') {
      if (live.length === 0) continue;
      const target = live[cmd.pick % live.length]!;
      expect(book.remove(target.id)).toEqual(target);
      ledger.get(target.id)!.removed += target.remaining;
    } else if (cmd.kind === 'decrease') {
      const candidates = live.filter((o) => o.remaining > 1n);
      if (candidates.length === 0) continue;
      const target = candidates[cmd.pick % candidates.length]!;
      const to = 1n + BigInt(Math.floor(cmd.fraction * Number(target.remaining - 2n)));
      const before = book.orders().map((o) => o.id);
      book.decrease(target.id, to);
      expect(book.orders().map((o) => o.id)).toEqual(before); // priority kept
      ledger.get(target.id)!.removed += target.remaining - to;
    } else {
      sequence++;
      const incoming: Order = {
        id: `o${sequence}`,
        accountId: cmd.accountId,
        side: cmd.side,
        action: cmd.action,
        price: cmd.price,
        remaining: cmd.lots,
        sequence,
      };
      const expected = referenceMatch(live, incoming, cmd.options);
      const liveById = new Map(live.map((o) => [o.id, o]));
      const result: MatchResult = match(book, incoming, cmd.options);

      expect(result.rejected !== undefined).toBe(expected.rejected);
      expect(result.fills.map((f) => `${f.maker.orderId} ${f.lots} @${f.yesPrice}`)).toEqual(expected.fills);
      expect(result.selfTradeCancelled.map((o) => o.id)).toEqual(expected.stp);
      expect(byId(book.orders())).toEqual(byId(expected.resting));
      expect(result.filled + result.restingRemainder + result.cancelledRemainder).toBe(incoming.remaining);

      ledger.set(incoming.id, { original: incoming.remaining, filled: result.filled, removed: result.cancelledRemainder });
      for (const fill of result.fills) {
        checkFill(fill, incoming, liveById.get(fill.maker.orderId)!);
        ledger.get(fill.maker.orderId)!.filled += fill.lots;
      }
      for (const victim of result.selfTradeCancelled) {
        expect(victim.accountId).toBe(incoming.accountId);
        expect(victim).toEqual(liveById.get(victim.id));
        ledger.get(victim.id)!.removed += victim.remaining;
      }
    }

    // After every step.
    book.validateInternalState();
    const bid = book.bestBid();
    const ask = book.bestAsk();
    if (bid !== undefined && ask !== undefined) expect(bid).toBeLessThan(ask);
    for (const [id, l] of ledger) {
      expect(l.filled).toBeLessThanOrEqual(l.original);
      expect(book.get(id)?.remaining ?? 0n).toBe(l.original - l.filled - l.removed);
    }
    const depth = book.depth();
    const inDepth = [...depth.yes, ...depth.no].reduce((s, [, lots]) => s + lots, 0n);
    expect(inDepth).toBe(book.orders().reduce((s, o) => s + o.remaining, 0n));
  }
}

describe('order book properties', () => {
  it('holds its invariants and agrees with a reference matcher over random order flow', () => {
    fc.assert(
      fc.property(fc.array(command, { minLength: 1, maxLength: 80 }), (commands) => run(commands)),
      { numRuns: 300 },
    );
  });
});

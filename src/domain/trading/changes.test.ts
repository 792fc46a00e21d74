import { describe, expect, it } from 'vitest';
import { OrderBook, type Order } from './book.js';
import { Changeset, payoutMicroDots, type LiveOrder } from './changes.js';

const M = '7';
const order = (o: Partial<Order> & Pick<Order, 'id' | 'accountId' | 'side' | 'action' | 'price' | 'remaining'>, sequence = 1n): Order => ({ sequence, ...o });
const live = (o: Order): LiveOrder => ({ id: o.id, accountId: o.accountId, marketId: M, side: o.side, action: o.action, price: o.price, remaining: o.remaining });

/** Sum of every balance delta, and the Dots locked in pairs created (mint) or destroyed (merge). */
function totals(changes: Changeset) {
  let money = 0n;
  for (const d of changes.balances.values()) money += d.cash + d.reserved;
  const pairs = changes.market(M).openInterest;
  return { money, pairs };
}

describe('Changeset', () => {
  it('mint: both buyers pay from their reserves, the taker gets its price improvement back, a pair is created', () => {
    const maker = order({ id: 'm', accountId: 'A', side: 'no', action: 'buy', price: 30, remaining: 10_000n });
    const book = new OrderBook([maker]);
    const taker = order({ id: 't', accountId: 'B', side: 'yes', action: 'buy', price: 75, remaining: 10_000n }, 2n);
    const result = book.match(taker, { timeInForce: 'GTC' });
    const changes = new Changeset();
    changes.reserve(live(taker), taker.remaining);
    for (const fill of result.fills) changes.applyFill(M, fill, taker.price);

    // B reserved 0.75, paid 0.70, got 0.05 back; A's reserve of 0.30 was consumed.
    expect(changes.balances.get('B')).toEqual({ cash: -700_000n, reserved: 0n });
    expect(changes.balances.get('A')).toEqual({ cash: 0n, reserved: -300_000n });
    expect([...changes.positions.values()]).toEqual([
      { accountId: 'A', marketId: M, side: 'no', shares: 10_000n, reserved: 0n },
      { accountId: 'B', marketId: M, side: 'yes', shares: 10_000n, reserved: 0n },
    ]);
    expect(changes.market(M)).toEqual({ volume: 10_000n, liquidity: -300_000n, openInterest: 10_000n, lastYesPrice: 70 });
    expect(changes.trades[0]!.takerSide).toBe('yes');
    expect(changes.makerFills.get('m')).toBe(10_000n);
    // Everything paid (1 Dot in all) now backs the pair.
    const { money, pairs } = totals(changes);
    expect(money + pairs * 100n).toBe(0n);
    expect(changes.ledger.map((l) => [l.accountId, l.kind, l.amount, l.reservedChange])).toEqual([
      ['B', 'reserve', 0n, 750_000n],
      ['A', 'fill', -300_000n, -300_000n],
      ['B', 'fill', -700_000n, -750_000n],
    ]);
  });

  it('merge: both sellers give up shares and are paid 1 Dot per pair between them', () => {
    const maker = order({ id: 'm', accountId: 'A', side: 'yes', action: 'sell', price: 60, remaining: 5_000n });
    const book = new OrderBook([maker]);
    const taker = order({ id: 't', accountId: 'B', side: 'no', action: 'sell', price: 35, remaining: 5_000n }, 2n);
    const changes = new Changeset();
    changes.reserve(live(taker), taker.remaining);
    for (const fill of book.match(taker, { timeInForce: 'IOC' }).fills) changes.applyFill(M, fill, taker.price);
    expect(changes.balances.get('A')).toEqual({ cash: 300_000n, reserved: 0n });
    expect(changes.balances.get('B')).toEqual({ cash: 200_000n, reserved: 0n });
    expect(changes.positions.get(`A|${M}|yes`)).toMatchObject({ shares: -5_000n, reserved: -5_000n });
    expect(changes.positions.get(`B|${M}|no`)).toMatchObject({ shares: -5_000n, reserved: 0n });
    expect(changes.market(M).openInterest).toBe(-5_000n);
    const { money, pairs } = totals(changes);
    expect(money + pairs * 100n).toBe(0n);
  });

  it('transfer: cash moves from buyer to seller, shares the other way, no pair', () => {
    const maker = order({ id: 'm', accountId: 'A', side: 'yes', action: 'buy', price: 40, remaining: 20_000n });
    const book = new OrderBook([maker]);
    const taker = order({ id: 't', accountId: 'B', side: 'yes', action: 'sell', price: 35, remaining: 10_000n }, 2n);
    const changes = new Changeset();
    changes.reserve(live(taker), taker.remaining);
    for (const fill of book.match(taker, { timeInForce: 'GTC' }).fills) changes.applyFill(M, fill, taker.price);
    expect(changes.balances.get('A')).toEqual({ cash: 0n, reserved: -400_000n });
    expect(changes.balances.get('B')).toEqual({ cash: 400_000n, reserved: 0n });
    expect(changes.positions.get(`B|${M}|yes`)).toMatchObject({ shares: -10_000n, reserved: 0n });
    expect(changes.trades[0]!.takerSide).toBe('no');
    expect(changes.market(M).openInterest).toBe(0n);
  });

  it('cancel and decrease release the reserve of what they remove and lower the resting notional', () => {
    const buy: LiveOrder = { id: 'b', accountId: 'A', marketId: M, side: 'no', action: 'buy', price: 45, remaining: 30_000n };
    const sell: LiveOrder = { id: 's', accountId: 'A', marketId: M, side: 'yes', action: 'sell', price: 50, remaining: 20_000n };
    const changes = new Changeset();
    changes.decreaseResting(buy, 10_000n);
    changes.cancelResting(sell, 'requested');
    expect(changes.balances.get('A')).toEqual({ cash: 900_000n, reserved: -900_000n });
    expect(changes.positions.get(`A|${M}|yes`)).toMatchObject({ shares: 0n, reserved: -20_000n });
    expect(changes.market(M).liquidity).toBe(-900_000n - 1_000_000n);
    expect(changes.cancels).toEqual([{ id: 's', reason: 'requested' }]);
    expect(changes.decreases).toEqual([{ id: 'b', remaining: 10_000n }]);
    expect(() => changes.decreaseResting(buy, 30_000n)).toThrow(RangeError);
    expect(() => changes.decreaseResting(buy, 0n)).toThrow(RangeError);
  });

  it('lists the accounts it touches sorted, whatever the order they came in', () => {
    const changes = new Changeset();
    changes.pay('c', M, 1n, '1');
    changes.removeShares('a', M, 'yes', 1n);
    changes.pay('b', M, 1n, '2');
    expect(changes.accounts()).toEqual(['a', 'b', 'c']);
  });
});

describe('payoutMicroDots', () => {
  it('pays 1 Dot per winning share, 0.50 per share of either side on invalid, nothing to losers', () => {
    expect(payoutMicroDots('yes', 'yes', 10_000n)).toBe(1_000_000n);
    expect(payoutMicroDots('yes', 'no', 10_000n)).toBe(0n);
    expect(payoutMicroDots('no', 'no', 15_000n)).toBe(1_500_000n);
    expect(payoutMicroDots('invalid', 'yes', 1n)).toBe(50n);
    expect(payoutMicroDots('invalid', 'no', 10_000n)).toBe(500_000n);
  });
});

describe('Changeset.absorb', () => {
  it('gives what one Changeset recording both placements gives, trade references renumbered', () => {
    const maker = order({ id: 'm', accountId: 'A', side: 'yes', action: 'buy', price: 40, remaining: 30_000n });
    const first = order({ id: 't1', accountId: 'B', side: 'no', action: 'buy', price: 70, remaining: 10_000n }, 2n);
    const second = order({ id: 't2', accountId: 'C', side: 'yes', action: 'sell', price: 35, remaining: 5_000n }, 3n);
    const record = (changes: Changeset, book: OrderBook, taker: Order) => {
      changes.reserve(live(taker), taker.remaining);
      for (const fill of book.match(taker, { timeInForce: 'GTC' }).fills) changes.applyFill(M, fill, taker.price);
    };
    const together = new Changeset();
    const bookTogether = new OrderBook([maker]);
    together.cancelResting(live(order({ id: 'x', accountId: 'D', side: 'no', action: 'buy', price: 20, remaining: 1_000n })), 'expired');
    record(together, bookTogether, first);
    record(together, bookTogether, second);

    const absorbed = new Changeset();
    const bookApart = new OrderBook([maker]);
    absorbed.cancelResting(live(order({ id: 'x', accountId: 'D', side: 'no', action: 'buy', price: 20, remaining: 1_000n })), 'expired');
    for (const taker of [first, second]) {
      const own = new Changeset();
      record(own, bookApart, taker);
      absorbed.absorb(own);
    }

    expect(absorbed.trades).toEqual(together.trades);
    expect(absorbed.ledger).toEqual(together.ledger);
    expect(absorbed.ledger.filter((l) => 'trade' in l.reference).map((l) => l.reference)).toEqual([
      { trade: 0, role: 'maker' },
      { trade: 0, role: 'taker' },
      { trade: 1, role: 'maker' },
      { trade: 1, role: 'taker' },
    ]);
    expect(absorbed.balances).toEqual(together.balances);
    expect([...absorbed.positions.values()].sort((a, b) => a.accountId.localeCompare(b.accountId))).toEqual(
      [...together.positions.values()].sort((a, b) => a.accountId.localeCompare(b.accountId)),
    );
    expect(absorbed.markets).toEqual(together.markets);
    expect(absorbed.makerFills).toEqual(new Map([['m', 15_000n]]));
    expect(absorbed.cancels).toEqual(together.cancels);
  });
});

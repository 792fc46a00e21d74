import { describe, expect, it } from 'vitest';
import type { PlacementReads } from '../../db/repositories/trading.js';
import { parsePlacement } from './input.js';
import { insertedRows, planPlacements, placementRead, type PlacementRequest } from './placement.js';
import type { PlaceOrderInput } from './types.js';

const NOW = new Date('2026-06-01T12:00:00Z');
const M = { id: '7', ticker: 'MKT', event_id: '1', status: 'ACTIVE' as const };

const request = (accountId: string, input: Omit<PlaceOrderInput, 'ticker'> & { ticker?: string }): PlacementRequest => ({
  accountId,
  order: parsePlacement({ ticker: 'MKT', ...input }, NOW),
  now: NOW,
});

/** Reads of a market with no live order, every account holding 100 Dots and nothing else. */
function reads(items: PlacementRequest[], more: Partial<PlacementReads> = {}): PlacementReads {
  return {
    markets: [M],
    sequences: items.map((_, i) => String(100 + i)),
    taken: [],
    positions: [],
    crossing: [],
    balances: [...new Set(items.map((i) => i.accountId))].sort().map((user_id) => ({ user_id, cash: '100.000000', reserved: '0.000000' })),
    ...more,
  };
}

const statuses = (plan: ReturnType<typeof planPlacements>) =>
  plan.outcomes.map((o) => ('error' in o ? o.error.message : plan.writes.flatMap((w) => w.orders).find((r) => r.id === o.orderId)!.status));

describe('placementRead', () => {
  it('names the book side a placement takes from and its YES-frame limit there', () => {
    expect(placementRead(request('A', { side: 'no', action: 'buy', price: '0.70', count: '1' }))).toMatchObject({ bookSide: 'bid', yesLimit: '0.30', sell: false });
    expect(placementRead(request('A', { side: 'yes', action: 'sell', price: '0.45', count: '1' }))).toMatchObject({ bookSide: 'bid', yesLimit: '0.45', sell: true });
    expect(placementRead(request('A', { side: 'yes', action: 'buy', price: '0.45', count: '1' }))).toMatchObject({ bookSide: 'ask', yesLimit: '0.45' });
  });
});

describe('planPlacements: statements', () => {
  it('writes placements that meet only what the database holds in one statement', () => {
    const items = [request('A', { side: 'yes', price: '0.40', count: '1' }), request('B', { side: 'yes', price: '0.41', count: '1' })];
    const plan = planPlacements(items, reads(items));
    expect(plan.writes).toHaveLength(1);
    expect(plan.writes[0]!.orders.map((o) => o.sequence)).toEqual(['100', '101']);
    expect(statuses(plan)).toEqual(['OPEN', 'OPEN']);
  });

  it('writes placements that meet orders placed earlier in the batch in one statement, folding the fills into the inserted rows', () => {
    const items = [
      request('A', { side: 'yes', price: '0.40', count: '2' }),
      request('C', { side: 'yes', price: '0.10', count: '1' }),
      request('B', { side: 'no', price: '0.70', count: '1' }), // meets A's bid
      request('D', { side: 'yes', price: '0.20', count: '1' }),
      request('E', { side: 'no', price: '0.70', count: '1' }), // meets what is left of A's bid
    ];
    const plan = planPlacements(items, reads(items));
    expect(plan.writes).toHaveLength(1);
    const [write] = plan.writes;
    // Each placement answers its order as it was once made.
    expect(statuses(plan)).toEqual(['OPEN', 'OPEN', 'FILLED', 'OPEN', 'FILLED']);
    expect(plan.outcomes.map((o) => ('placed' in o ? o.placed.status : undefined))).toEqual(['OPEN', 'OPEN', 'FILLED', 'OPEN', 'FILLED']);
    const a = write!.orders[0]!.id;
    expect(write!.changes.makerFills.get(a)).toBe(20_000n);
    expect(write!.resting.get(a)).toBe(20_000n);
    // The statement inserts A's order as the batch leaves it, and updates no order.
    const rows = insertedRows(write!, write!.changes);
    expect(rows.inserted[0]).toMatchObject({ id: a, remaining: '0', filled: '2', cancelled: '0', status: 'FILLED', cancel_reason: null });
    expect(rows.inserted.slice(1).map((r) => r.status)).toEqual(['OPEN', 'FILLED', 'OPEN', 'FILLED']);
    expect(rows.makerFills.size).toBe(0);
    expect(rows.cancels).toEqual([]);
    // The feed adds A's 2 as placed; its two trades take them off.
    expect(rows.booked.get(a)).toBe(20_000n);
  });

  it('folds a self-trade cancel of an order placed earlier in the batch into its inserted row', () => {
    const items = [
      request('A', { side: 'yes', price: '0.40', count: '3' }),
      request('B', { side: 'no', price: '0.70', count: '1' }), // fills 1 of A's 3
      request('A', { side: 'no', price: '0.70', count: '1' }), // meets its own bid: cancelled by self-trade prevention
    ];
    const plan = planPlacements(items, reads(items));
    expect(plan.writes).toHaveLength(1);
    const rows = insertedRows(plan.writes[0]!, plan.writes[0]!.changes);
    const a = plan.writes[0]!.orders[0]!.id;
    expect(rows.inserted[0]).toMatchObject({ id: a, remaining: '0', filled: '1', cancelled: '2', status: 'CANCELLED', cancel_reason: 'self_trade' });
    expect(rows.cancels).toEqual([]);
    // Placed with 3 resting, 2 cancelled, 1 traded: the feed books 1, which the trade takes off.
    expect(rows.booked.get(a)).toBe(10_000n);
    // A's own NO buy then rests: nothing else is in the book.
    expect(statuses(plan)).toEqual(['OPEN', 'FILLED', 'OPEN']);
  });

  it('leaves fills and cancels of orders the statement does not insert to updates', () => {
    const resting = { id: 'r1', account_id: 'A', market_id: '7', side: 'yes' as const, action: 'buy' as const, price: '0.40', remaining: '2.0000', expiration_ts: null, sequence: '5' };
    const expired = { ...resting, id: 'r0', price: '0.45', expiration_ts: new Date(NOW.getTime() - 1000), sequence: '4' };
    const items = [request('B', { side: 'no', price: '0.70', count: '1' })];
    const plan = planPlacements(items, reads(items, { crossing: [expired, resting], balances: ['A', 'B'].map((user_id) => ({ user_id, cash: '100', reserved: '1.70' })) }));
    const rows = insertedRows(plan.writes[0]!, plan.writes[0]!.changes);
    expect([...rows.makerFills]).toEqual([['r1', 10_000n]]);
    expect(rows.cancels).toEqual([{ id: 'r0', reason: 'expired' }]);
    expect(rows.inserted.map((r) => r.status)).toEqual(['FILLED']);
  });

  it('starts a new statement where a placement cancels (self-trade) an order the current one already fills', () => {
    const resting = { id: 'r1', account_id: 'A', market_id: '7', side: 'yes' as const, action: 'buy' as const, price: '0.40', remaining: '2.0000', expiration_ts: null, sequence: '5' };
    const items = [request('B', { side: 'no', price: '0.70', count: '1' }), request('A', { side: 'no', price: '0.70', count: '1' })];
    const plan = planPlacements(items, reads(items, { crossing: [resting], balances: ['A', 'B'].map((user_id) => ({ user_id, cash: '100', reserved: '0.80' })) }));
    expect(plan.writes).toHaveLength(2);
    expect(plan.writes[0]!.changes.makerFills.get('r1')).toBe(10_000n);
    expect(plan.writes[1]!.changes.cancels).toEqual([{ id: 'r1', reason: 'self_trade' }]);
  });

});

describe('planPlacements: what earlier placements did', () => {
  it('counts what earlier placements did: cash spent, shares bought, client_order_ids used', () => {
    const items = [
      request('A', { side: 'yes', price: '0.50', count: '150' }), // 75 of A's 100 Dots
      request('A', { side: 'yes', price: '0.50', count: '60' }), // 30 more: refused
      request('B', { side: 'no', price: '0.60', count: '10', client_order_id: 'x' }), // buys NO at 0.50 from A's bid: mint
      request('B', { side: 'no', action: 'sell', price: '0.40', count: '10' }), // sells the NO just bought
      request('B', { side: 'no', price: '0.60', count: '1', client_order_id: 'x' }),
    ];
    const plan = planPlacements(items, reads(items));
    expect(statuses(plan)).toEqual([
      'OPEN',
      'insufficient balance: 25.00 Dots available, order needs 30.00',
      'FILLED',
      'OPEN',
      "client_order_id 'x' is already used by another order of this account",
    ]);
  });

  it('cancels expired live orders instead of matching them, and answers a missing or closed market per placement', () => {
    const expired = { id: 'old', account_id: 'A', market_id: '7', side: 'yes' as const, action: 'buy' as const, price: '0.40', remaining: '1', expiration_ts: new Date(NOW.getTime() - 1), sequence: '5' };
    const items = [
      request('B', { side: 'no', price: '0.70', count: '1' }),
      request('B', { ticker: 'GONE', side: 'no', price: '0.70', count: '1' }),
      request('B', { ticker: 'SHUT', side: 'no', price: '0.70', count: '1' }),
      request('B', { ticker: '7', side: 'yes', price: '0.20', count: '1' }),
    ];
    const shut = { id: '8', ticker: 'SHUT', event_id: '1', status: 'CLOSED' as const };
    const plan = planPlacements(items, reads(items, { markets: [M, shut], crossing: [expired] }));
    expect(statuses(plan)).toEqual(['OPEN', "no market 'GONE'", "market 'SHUT' is CLOSED, not ACTIVE", 'OPEN']);
    expect(plan.writes[0]!.changes.cancels).toEqual([{ id: 'old', reason: 'expired' }]);
  });
});

import { describe, expect, it } from 'vitest';
import { Changeset } from '../trading/changes.js';
import { MAX_NOTIFIED_ACCOUNTS, outboxEntries, type BookRemoval, type ChangedOrder } from './outbox.js';

const at = new Date('2026-01-01T00:00:00.000Z');

function row(id: string, accountId: string, overrides: Partial<ChangedOrder> = {}): ChangedOrder {
  return {
    id,
    account_id: accountId,
    market_id: '7',
    side: 'yes',
    action: 'buy',
    price: '0.45',
    count: '10.0000',
    remaining: '10.0000',
    filled: '0.0000',
    cancelled: '0.0000',
    status: 'OPEN',
    time_in_force: 'GTC',
    post_only: false,
    reduce_only: false,
    client_order_id: id,
    builder_code: `0x${'0'.repeat(64)}`,
    expiration_ts: null,
    sequence: '1',
    cancel_reason: null,
    created_at: at,
    updated_at: at,
    ...overrides,
  };
}

describe('outboxEntries', () => {
  it('turns a placement that fills a maker, cancels an own order and rests into book changes, trades, fills and orders', () => {
    const changes = new Changeset();
    // Taker buys NO 5 at 0.60 (a YES ask at 0.40): meets a YES bid of 3 at 0.45 (maker m1), rests 2.
    changes.applyFill(
      '7',
      {
        maker: { orderId: 'm1', accountId: 'maker', side: 'yes', action: 'buy', price: 45 },
        taker: { orderId: 't1', accountId: 'taker', side: 'no', action: 'buy', price: 55 },
        lots: 30_000n,
        yesPrice: 45,
        kind: 'mint',
        takerPriceImprovement: 0n,
      },
      60,
    );
    const cancelled: BookRemoval = { ...row('own', 'taker', { side: 'yes', status: 'CANCELLED', remaining: '0.0000', cancelled: '4.0000', sequence: '2' }), book_side: 'bid', yes_price: '0.42', removed: '4.0000' };
    const placed = row('t1', 'taker', { side: 'no', price: '0.60', count: '5.0000', remaining: '2.0000', filled: '3.0000', status: 'PARTIAL', sequence: '3' });
    const [entry, ...others] = outboxEntries({
      changes,
      tradeIds: ['100'],
      fillIds: new Map([
        ['100:maker', '200'],
        ['100:taker', '201'],
      ]),
      filled: [row('m1', 'maker', { remaining: '0.0000', filled: '3.0000', count: '3.0000', status: 'FILLED' })],
      cancelled: [cancelled],
      decreased: [],
      placed: [{ row: placed, resting: 20_000n }],
      figures: new Map([['7', { last_yes_price: '0.4500', volume: '3.0000', open_interest: '3.0000' }]]),
    });
    expect(others).toEqual([]);
    expect(entry!.marketId).toBe('7');
    // The maker's level loses 3, the cancelled one 4; the taker's NO bid rests 2 at 0.60.
    expect(entry!.events.book).toEqual([
      { side: 'yes', price: '0.45', delta: '-3' },
      { side: 'yes', price: '0.42', delta: '-4' },
      { side: 'no', price: '0.60', delta: '2' },
    ]);
    expect(entry!.events.trades).toEqual([{ trade_id: '100', yes_price: '0.45', count: '3', taker_side: 'no' }]);
    expect(entry!.events.fills.map((f) => [f.fill_id, f.account_id, f.role, f.price, f.yes_price])).toEqual([
      ['200', 'maker', 'maker', '0.45', '0.45'],
      ['201', 'taker', 'taker', '0.55', '0.45'],
    ]);
    expect(entry!.events.orders.map((o) => [o.id, o.status, o.created_at])).toEqual([
      ['m1', 'FILLED', '2026-01-01T00:00:00.000Z'],
      ['own', 'CANCELLED', '2026-01-01T00:00:00.000Z'],
      ['t1', 'PARTIAL', '2026-01-01T00:00:00.000Z'],
    ]);
    expect(entry!.events.market).toEqual({ last_yes_price: '0.4500', volume: '3.0000', open_interest: '3.0000' });
    expect(new Set(entry!.accounts)).toEqual(new Set(['maker', 'taker']));
  });

  it('lists accounts up to a bound, then "*"; writes nothing when nothing changed', () => {
    const many = Array.from({ length: MAX_NOTIFIED_ACCOUNTS + 1 }, (_, i): BookRemoval => ({ ...row(`o${i}`, `a${i}`), book_side: 'bid', yes_price: '0.45', removed: '1' }));
    const base = { changes: new Changeset(), tradeIds: [], fillIds: new Map(), filled: [], decreased: [], placed: [], figures: new Map() };
    const [entry] = outboxEntries({ ...base, cancelled: many });
    expect(entry!.accounts).toBe('*');
    expect(entry!.events.book).toEqual([{ side: 'yes', price: '0.45', delta: `-${MAX_NOTIFIED_ACCOUNTS + 1}` }]);
    expect(outboxEntries({ ...base, cancelled: [] })).toEqual([]);
  });
});

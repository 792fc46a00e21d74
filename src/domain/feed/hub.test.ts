import { describe, expect, it } from 'vitest';
import { FeedHub, Subscription, type Outlet } from './hub.js';
import { PublishedRecord } from './messages.js';
import type { BookSnapshot, CommittedOrder, FeedEvents } from './types.js';
import type { FillRole, Outcome } from '../../db/tables.js';

const ORDER: CommittedOrder = {
  id: '00000000-0000-4000-8000-000000000001',
  account_id: 'acct-a',
  market_id: '1',
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
  client_order_id: 'c1',
  builder_code: `0x${'0'.repeat(64)}`,
  expiration_ts: null,
  sequence: '1',
  cancel_reason: null,
  created_at: '2026-01-01T00:00:00.000Z',
  updated_at: '2026-01-01T00:00:00.000Z',
};

function record(marketId: string, seq: number, events: Partial<FeedEvents> = {}): PublishedRecord {
  return new PublishedRecord({
    marketId,
    seq,
    ticker: `MKT-${marketId}`,
    events: { book: [], trades: [], fills: [], orders: [], market: null, ...events },
    createdAt: new Date(Date.UTC(2026, 0, 1, 0, 0, seq)),
  });
}

/** A feed message as a client reads it. */
type Sent = { type: string; seq: number; msg: Record<string, unknown> };

class Collector implements Outlet {
  readonly sent: Sent[] = [];
  overflowed: string | undefined;
  send(text: string): void {
    this.sent.push(JSON.parse(text) as Sent);
  }
  overflow(reason: string): void {
    this.overflowed = reason;
  }
}

function hub(snapshots: Map<string, BookSnapshot> = new Map()): { hub: FeedHub; loads: Array<() => void> } {
  const loads: Array<() => void> = [];
  const h = new FeedHub({
    snapshot: (marketId) => new Promise((resolve) => loads.push(() => resolve(snapshots.get(marketId)!))),
    maxPending: 3,
    onError: (error) => {
      throw error;
    },
  });
  return { hub: h, loads };
}

const flush = () => new Promise((resolve) => setTimeout(resolve, 0));
const delta = (side: Outcome, price: string, d: string) => ({ side, price, delta: d });

describe('FeedHub and Subscription: order-book channels', () => {
  it('orderbook_delta: keeps records until the snapshot, then sends only those after its position, seq 1, 2, 3...', () => {
    const { hub: h } = hub();
    const out = new Collector();
    const sub = new Subscription(1, 'orderbook_delta', [{ id: '1', ticker: 'MKT-1' }], undefined, out, 10);
    h.add(sub);
    h.publish(record('1', 4, { book: [delta('yes', '0.40', '1')] }));
    h.publish(record('1', 5, { book: [delta('yes', '0.41', '2'), delta('no', '0.50', '-1')] }));
    h.publish(record('2', 1, { book: [delta('yes', '0.10', '1')] }));
    expect(out.sent).toEqual([]);
    // The snapshot was taken at position 4: record 4 is in it, record 5 is not.
    sub.snapshot('1', { market_ticker: 'MKT-1', market_id: '1', yes: [['0.40', '1']], no: [['0.50', '1']] }, 4);
    h.publish(record('1', 6, { book: [delta('yes', '0.40', '-1')] }));
    expect(out.sent.map((m) => [m.type, m.seq, m.msg.price ?? null, m.msg.delta ?? null])).toEqual([
      ['orderbook_snapshot', 1, null, null],
      ['orderbook_delta', 2, '0.41', '2'],
      ['orderbook_delta', 3, '0.50', '-1'],
      ['orderbook_delta', 4, '0.40', '-1'],
    ]);
    // A gap skips a number; after removal nothing arrives.
    h.gap('1');
    h.publish(record('1', 8, { book: [delta('yes', '0.30', '1')] }));
    expect(out.sent.at(-1)?.seq).toBe(6);
    h.remove(sub);
    h.publish(record('1', 9, { book: [delta('yes', '0.30', '1')] }));
    expect(out.sent.length).toBe(5);
    expect(h.size).toBe(0);
  });

  it('cuts a subscription off when too many records pile up before its snapshot', () => {
    const { hub: h } = hub();
    const out = new Collector();
    h.add(new Subscription(1, 'orderbook_delta', [{ id: '1', ticker: 'MKT-1' }], undefined, out, 2));
    for (let seq = 1; seq <= 3; seq += 1) h.publish(record('1', seq));
    expect(out.overflowed).toMatch(/more than 2 updates/);
  });

});

describe('FeedHub and Subscription: private and ticker channels', () => {
  it("private channels: only the subscriber's own fills and orders, optionally of some markets", () => {
    const { hub: h } = hub();
    const a = new Collector();
    const b = new Collector();
    h.add(new Subscription(1, 'user_orders', null, 'acct-a', a, 10));
    h.add(new Subscription(2, 'fill', [{ id: '2', ticker: 'MKT-2' }], 'acct-b', b, 10));
    const fill = (account: string, role: FillRole) => ({
      fill_id: `${account}-${role}`,
      trade_id: '9',
      order_id: ORDER.id,
      account_id: account,
      side: 'yes' as const,
      action: 'buy' as const,
      price: '0.45',
      yes_price: '0.45',
      count: '1',
      role,
    });
    expect(h.wants('1', ['acct-c'])).toBe(false);
    expect(h.wants('1', ['acct-c', 'acct-a'])).toBe(true);
    expect(h.wants('1', '*')).toBe(true);
    h.publish(record('1', 1, { orders: [ORDER, { ...ORDER, id: 'other', account_id: 'acct-b' }], fills: [fill('acct-a', 'maker'), fill('acct-b', 'taker')] }));
    h.publish(record('2', 1, { fills: [fill('acct-b', 'taker')] }));
    expect(a.sent.map((m) => [m.type, m.seq, m.msg.order_id, m.msg.count, m.msg.ticker])).toEqual([['user_order', 1, ORDER.id, '10', 'MKT-1']]);
    expect(b.sent.map((m) => [m.type, m.seq, m.msg.fill_id, m.msg.market_ticker, m.msg.is_taker, m.msg.client_order_id])).toEqual([['fill', 1, 'acct-b-taker', 'MKT-2', true, null]]);
  });

  it('ticker: loads the market book on its first record, then sends the best bid and ask after each record that changes them', async () => {
    const snapshot: BookSnapshot = {
      seq: 2,
      levels: [
        { book_side: 'bid', yes_price: '0.40', count: '5.0000' },
        { book_side: 'ask', yes_price: '0.60', count: '3.0000' },
      ],
      figures: { last_yes_price: '0.5000', volume: '10.0000', open_interest: '4.0000' },
    };
    const { hub: h, loads } = hub(new Map([['1', snapshot]]));
    const out = new Collector();
    const every = new Collector();
    const one = new Subscription(1, 'ticker', [{ id: '1', ticker: 'MKT-1' }], undefined, out, 10);
    const all = new Subscription(2, 'ticker', null, undefined, every, 10);
    h.add(one);
    h.add(all);
    h.publish(record('1', 2, { book: [delta('yes', '0.40', '5')] }));
    expect(h.tickerBooks).toBe(1);
    expect(out.sent).toEqual([]);
    loads.shift()!();
    await flush();
    const ticker = (m: Sent) => [m.seq, m.msg.yes_bid, m.msg.yes_ask, m.msg.price, m.msg.volume, m.msg.open_interest];
    expect(out.sent.map(ticker)).toEqual([[1, '0.40', '0.60', '0.50', '10', '4']]);
    // A better bid; then a record that changes nothing of the ticker (not sent); then the ask goes.
    h.publish(record('1', 3, { book: [delta('yes', '0.45', '1')] }));
    h.publish(record('1', 4, { book: [delta('yes', '0.30', '2')] }));
    h.publish(record('1', 5, { book: [delta('no', '0.40', '-3')], market: { last_yes_price: '0.6000', volume: '13.0000', open_interest: '4.0000' } }));
    expect(out.sent.map(ticker)).toEqual([
      [1, '0.40', '0.60', '0.50', '10', '4'],
      [2, '0.45', '0.60', '0.50', '10', '4'],
      [3, '0.45', null, '0.60', '13', '4'],
    ]);
    expect(every.sent.map(ticker)).toEqual(out.sent.map(ticker));
    // The book is kept while a ticker subscription follows the market, dropped after the last one.
    h.remove(all);
    expect(h.tickerBooks).toBe(1);
    h.remove(one);
    expect(h.tickerBooks).toBe(0);
  });
});

import { describe, expect, it } from 'vitest';
import { FeedRelay, type RelaySource } from './relay.js';
import type { FeedRecord } from './types.js';

/** An outbox in memory: records per market, numbered from 1. */
class FakeOutbox implements RelaySource {
  readonly records = new Map<string, FeedRecord[]>();
  reads = 0;
  failNext = false;

  write(marketId: string): number {
    const list = this.records.get(marketId) ?? [];
    const seq = list.length + 1;
    list.push({ marketId, seq, ticker: `M${marketId}`, events: { book: [], trades: [], fills: [], orders: [], market: null }, createdAt: new Date() });
    this.records.set(marketId, list);
    return seq;
  }

  prune(marketId: string, upTo: number): void {
    this.records.set(marketId, (this.records.get(marketId) ?? []).filter((r) => r.seq > upTo));
  }

  sequences(): Promise<Array<[string, number]>> {
    return Promise.resolve([...this.records].map(([m, list]) => [m, list.at(-1)?.seq ?? 0]));
  }

  read(after: ReadonlyArray<readonly [string, number]>, limit: number): Promise<FeedRecord[]> {
    this.reads += 1;
    if (this.failNext) {
      this.failNext = false;
      return Promise.reject(new Error('connection lost'));
    }
    const out = after.flatMap(([m, seq]) => (this.records.get(m) ?? []).filter((r) => r.seq > seq));
    return Promise.resolve(out.slice(0, limit));
  }
}

function relayOver(outbox: FakeOutbox, wants: (marketId: string, accounts: readonly string[] | '*') => boolean = () => true) {
  const published: Array<[string, number]> = [];
  const gaps: string[] = [];
  const errors: unknown[] = [];
  const relay = new FeedRelay(outbox, { wants, publish: (r) => published.push([r.marketId, r.seq]), gap: (m) => gaps.push(m), error: (e) => errors.push(e) });
  return { relay, published, gaps, errors };
}

describe('FeedRelay: reading notified records', () => {
  it('starts from every market current position, then publishes each notified record once, in order', async () => {
    const outbox = new FakeOutbox();
    outbox.write('1');
    outbox.write('1');
    const { relay, published } = relayOver(outbox);
    await relay.resync();
    expect(relay.position('1')).toBe(2);
    const a = outbox.write('1');
    const b = outbox.write('2');
    const c = outbox.write('1');
    // Notifications may cover several records, and arrive for records already read.
    relay.notified(`1:${a}:,2:${b}:`);
    relay.notified(`1:${c}:`);
    await relay.drain();
    relay.notified(`1:${a}:`);
    await relay.drain();
    expect(published).toEqual([
      ['1', 3],
      ['1', 4],
      ['2', 1],
    ]);
  });

  it('replays notifications received before its first resync', async () => {
    const outbox = new FakeOutbox();
    const { relay, published } = relayOver(outbox);
    const seq = outbox.write('5');
    relay.notified(`5:${seq}:`);
    const next = outbox.write('5');
    relay.notified(`5:${next}:`);
    await relay.resync();
    await relay.drain();
    // Both were committed before the positions were read: taken as published, nothing replayed twice.
    expect(relay.position('5')).toBe(2);
    expect(published).toEqual([]);
  });

  it('does not read records no subscription wants, unless something of the market is pending', async () => {
    const outbox = new FakeOutbox();
    let wanted = false;
    const { relay, published } = relayOver(outbox, (_m, accounts) => wanted || accounts === '*' || accounts.includes('acct-b'));
    await relay.resync();
    relay.notified(`1:${outbox.write('1')}:acct-a`);
    await relay.drain();
    expect(outbox.reads).toBe(0);
    expect(relay.position('1')).toBe(1);
    relay.notified(`1:${outbox.write('1')}:acct-a|acct-b`);
    relay.notified(`1:${outbox.write('1')}:acct-a`); // behind a pending record of its market: read too
    await relay.drain();
    expect(published).toEqual([
      ['1', 2],
      ['1', 3],
    ]);
    wanted = true;
    relay.notified(`1:${outbox.write('1')}:`);
    await relay.drain();
    expect(published.at(-1)).toEqual(['1', 4]);
  });

});

describe('FeedRelay: gaps and resyncs', () => {
  it('reports a gap once when records were pruned before it could read them, and goes on', async () => {
    const outbox = new FakeOutbox();
    const { relay, published, gaps } = relayOver(outbox);
    await relay.resync();
    outbox.write('1');
    outbox.write('1');
    const third = outbox.write('1');
    outbox.prune('1', 2);
    relay.notified(`1:${third}:`);
    await relay.drain();
    expect(gaps).toEqual(['1']);
    expect(published).toEqual([['1', 3]]);
  });

  it('after a failed read, reads everything missed on resync (the reconnection)', async () => {
    const outbox = new FakeOutbox();
    const { relay, published, errors } = relayOver(outbox);
    await relay.resync();
    outbox.failNext = true;
    relay.notified(`1:${outbox.write('1')}:`);
    await relay.drain();
    expect(errors.length).toBe(1);
    // Written while the listener was away: no notification for these.
    outbox.write('1');
    outbox.write('2');
    await relay.resync();
    expect(published).toEqual([
      ['1', 1],
      ['1', 2],
      ['2', 1],
    ]);
  });

  it('treats a "*" payload as a resync', async () => {
    const outbox = new FakeOutbox();
    const { relay, published } = relayOver(outbox);
    await relay.resync();
    outbox.write('7');
    outbox.write('8');
    relay.notified('*');
    await new Promise((resolve) => setTimeout(resolve, 10));
    await relay.drain();
    expect(published.sort()).toEqual([
      ['7', 1],
      ['8', 1],
    ]);
  });
});

describe('FeedRelay: records this process committed', () => {
  const recordOf = (outbox: FakeOutbox, marketId: string, seq: number) => outbox.records.get(marketId)!.find((r) => r.seq === seq)!;

  it('are published at once, without a read, and not again when their notification arrives', async () => {
    const outbox = new FakeOutbox();
    const { relay, published } = relayOver(outbox);
    await relay.resync();
    const a = outbox.write('1');
    const b = outbox.write('1');
    relay.committed([recordOf(outbox, '1', a), recordOf(outbox, '1', b)]);
    expect(published).toEqual([
      ['1', 1],
      ['1', 2],
    ]);
    relay.notified(`1:${a}:,1:${b}:`);
    await relay.drain();
    expect(outbox.reads).toBe(0);
    expect(published).toHaveLength(2);
  });

  it('wait for the records before them that another process wrote: their market is read, in order', async () => {
    const outbox = new FakeOutbox();
    const { relay, published, gaps } = relayOver(outbox);
    await relay.resync();
    outbox.write('1'); // another process's, not notified yet
    const mine = outbox.write('1');
    relay.committed([recordOf(outbox, '1', mine)]);
    expect(published).toEqual([]);
    await relay.drain();
    expect(published).toEqual([
      ['1', 1],
      ['1', 2],
    ]);
    expect(gaps).toEqual([]);
  });

  it('wait while their market is being read, and are published once, after what the read brings', async () => {
    const outbox = new FakeOutbox();
    const { relay, published } = relayOver(outbox);
    await relay.resync();
    const first = outbox.write('1');
    relay.notified(`1:${first}:`);
    // The read of record 1 is in flight; record 2 (this process's) commits meanwhile.
    const mine = outbox.write('1');
    relay.committed([recordOf(outbox, '1', mine)]);
    await relay.drain();
    relay.notified(`1:${mine}:`);
    await relay.drain();
    expect(published).toEqual([
      ['1', 1],
      ['1', 2],
    ]);
  });

  it('are left to the notification before the first resync', async () => {
    const outbox = new FakeOutbox();
    const { relay, published } = relayOver(outbox);
    const seq = outbox.write('1');
    relay.committed([recordOf(outbox, '1', seq)]);
    expect(published).toEqual([]);
    await relay.resync();
    expect(relay.position('1')).toBe(1);
  });
});

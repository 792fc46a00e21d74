import { describe, expect, it } from 'vitest';
import { SnapshotBatcher } from './snapshots.js';
import type { BookSnapshot } from './types.js';

const snapshotOf = (id: string): BookSnapshot => ({ seq: Number(id), levels: [], figures: { last_yes_price: null, volume: '0', open_interest: '0' } });

describe('SnapshotBatcher', () => {
  it('reads the markets asked for in one turn together, once each, and shares a snapshot between its askers', async () => {
    const reads: string[][] = [];
    const batcher = new SnapshotBatcher((ids) => {
      reads.push(ids);
      return Promise.resolve(new Map(ids.map((id) => [id, snapshotOf(id)])));
    });
    const asked = ['1', '2', '3', '2', '1'].map((id) => batcher.snapshot(id));
    const got = await Promise.all(asked);
    expect(reads).toEqual([['1', '2', '3']]);
    expect(got.map((s) => s.seq)).toEqual([1, 2, 3, 2, 1]);
    expect(got[0]).toBe(got[4]);
  });

  it('never hands a request a read that started before it (a later ask gets a later read)', async () => {
    const reads: string[][] = [];
    let release: () => void = () => undefined;
    const batcher = new SnapshotBatcher(async (ids) => {
      reads.push(ids);
      if (reads.length === 1) await new Promise<void>((resolve) => (release = resolve));
      return new Map(ids.map((id) => [id, snapshotOf(id)]));
    });
    const first = batcher.snapshot('7');
    await new Promise((resolve) => setImmediate(resolve));
    const second = batcher.snapshot('7');
    await new Promise((resolve) => setImmediate(resolve));
    expect(reads).toEqual([['7'], ['7']]);
    release();
    await Promise.all([first, second]);
  });

  it('splits a large batch, and rejects a market the read did not find or a failed read', async () => {
    const reads: number[] = [];
    const batcher = new SnapshotBatcher((ids) => {
      reads.push(ids.length);
      if (ids.includes('boom')) return Promise.reject(new Error('read failed'));
      return Promise.resolve(new Map(ids.filter((id) => id !== 'gone').map((id) => [id, snapshotOf(id)])));
    }, 2);
    const results = await Promise.allSettled(['1', '2', '3', 'gone', 'boom'].map((id) => batcher.snapshot(id)));
    expect(reads).toEqual([2, 2, 1]);
    expect(results.map((r) => r.status)).toEqual(['fulfilled', 'fulfilled', 'fulfilled', 'rejected', 'rejected']);
  });
});

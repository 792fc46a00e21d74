import { describe, expect, it } from 'vitest';
import { Batcher, type BatchResult } from './batcher.js';

/** A batcher whose batches are recorded and finish when the test says so. */
function harness(maxBatch = 3) {
  const batches: Array<{ items: number[]; finish: (outcomes?: Array<BatchResult<string>>) => void; fail: (error: unknown) => void }> = [];
  const batcher = new Batcher<number, string>(
    (items) =>
      new Promise((resolve, reject) => {
        batches.push({ items, finish: (outcomes) => resolve(outcomes ?? items.map((n) => ({ value: `v${n}` }))), fail: reject });
      }),
    maxBatch,
  );
  return { batcher, batches };
}

const settle = <T>(promise: Promise<T>) => promise.then((value) => ({ value }), (error: unknown) => ({ error }));

describe('Batcher', () => {
  it('runs the first item at once, alone, and groups the items that arrive meanwhile, in order, up to the maximum', async () => {
    const { batcher, batches } = harness(3);
    const results = [1, 2, 3, 4, 5].map((n) => settle(batcher.submit(n)));
    expect(batches.map((b) => b.items)).toEqual([[1]]);
    batches[0]!.finish();
    await Promise.resolve();
    await Promise.resolve();
    expect(batches.map((b) => b.items)).toEqual([[1], [2, 3, 4]]);
    batches[1]!.finish();
    await new Promise((resolve) => setImmediate(resolve));
    expect(batches.map((b) => b.items)).toEqual([[1], [2, 3, 4], [5]]);
    batches[2]!.finish();
    expect(await Promise.all(results)).toEqual(['v1', 'v2', 'v3', 'v4', 'v5'].map((value) => ({ value })));
  });

  it('gives each item its own outcome, and a failed batch its error to every item of it only', async () => {
    const { batcher, batches } = harness();
    const first = settle(batcher.submit(1));
    const second = settle(batcher.submit(2));
    const third = settle(batcher.submit(3));
    const boom = new Error('boom');
    batches[0]!.fail(boom);
    expect(await first).toEqual({ error: boom });
    await new Promise((resolve) => setImmediate(resolve));
    batches[1]!.finish([{ value: 'ok' }, { error: 'refused' }]);
    expect(await second).toEqual({ value: 'ok' });
    expect(await third).toEqual({ error: 'refused' });
  });

  it('starts afresh once the queue has drained', async () => {
    const { batcher, batches } = harness();
    const first = batcher.submit(1);
    batches[0]!.finish();
    expect(await first).toBe('v1');
    const again = batcher.submit(2);
    expect(batches.map((b) => b.items)).toEqual([[1], [2]]);
    batches[1]!.finish();
    expect(await again).toBe('v2');
  });

  it('keeps items submitted together in one batch, in order, taking whole submissions up to the maximum', async () => {
    const { batcher, batches } = harness(4);
    const alone = batcher.submitTogether([1, 2]);
    const next = batcher.submitTogether([3, 4, 5]);
    const single = settle(batcher.submit(6));
    const last = batcher.submitTogether([7, 8, 9, 10, 11]);
    // The first submission starts at once, whole; the rest wait.
    expect(batches.map((b) => b.items)).toEqual([[1, 2]]);
    batches[0]!.finish([{ value: 'one' }, { error: 'two refused' }]);
    expect(await alone).toEqual([{ value: 'one' }, { error: 'two refused' }]);
    await new Promise((resolve) => setImmediate(resolve));
    // [3, 4, 5] and 6 fill the batch of 4; [7..11] is larger than the maximum and goes alone, unsplit.
    expect(batches.map((b) => b.items)).toEqual([[1, 2], [3, 4, 5, 6]]);
    batches[1]!.finish();
    expect(await next).toEqual([{ value: 'v3' }, { value: 'v4' }, { value: 'v5' }]);
    expect(await single).toEqual({ value: 'v6' });
    await new Promise((resolve) => setImmediate(resolve));
    expect(batches.map((b) => b.items)).toEqual([[1, 2], [3, 4, 5, 6], [7, 8, 9, 10, 11]]);
    batches[2]!.fail(new Error('boom'));
    expect((await last).map((o) => ('error' in o ? String(o.error) : 'value'))).toEqual(Array(5).fill('Error: boom'));
  });

  it('starts the next batch before handing out the outcomes of the one before, which follow on the next turn', async () => {
    const { batcher, batches } = harness();
    let heard = false;
    const first = batcher.submit(1).then((value) => {
      heard = true;
      return value;
    });
    const second = batcher.submit(2);
    batches[0]!.finish();
    for (let i = 0; i < 10; i++) await Promise.resolve();
    // The second batch runs; the first one's waiter has not heard yet.
    expect(batches.map((b) => b.items)).toEqual([[1], [2]]);
    expect(heard).toBe(false);
    await new Promise((resolve) => setImmediate(resolve));
    expect(heard).toBe(true);
    expect(await first).toBe('v1');
    // The last batch, with none after it, hands its outcomes out at once.
    batches[1]!.finish();
    for (let i = 0; i < 10; i++) await Promise.resolve();
    expect(await Promise.race([second, Promise.resolve('not yet')])).toBe('v2');
  });

  it('settles an empty submission at once without running a batch', async () => {
    const { batcher, batches } = harness();
    expect(await batcher.submitTogether([])).toEqual([]);
    expect(batches).toEqual([]);
  });
});

import { describe, expect, it } from 'vitest';
import { DomainError } from '../errors.js';
import { PasswordQueue } from './password-queue.js';

/** A hash that ends when the test says so. */
function gate(): { work: () => Promise<string>; open: () => void; started: boolean } {
  let open!: () => void;
  const done = new Promise<void>((resolve) => (open = resolve));
  const g = {
    started: false,
    open: () => open(),
    work: async () => {
      g.started = true;
      await done;
      return 'hashed';
    },
  };
  return g;
}

const settle = <T>(promise: Promise<T>) => promise.then((value) => ({ value }), (error: unknown) => ({ error }));
const tick = () => new Promise((resolve) => setImmediate(resolve));

describe('PasswordQueue', () => {
  it('lets one address use every place, and refuses it at once beyond them', async () => {
    const queue = new PasswordQueue({ concurrency: 1, queue: 3 });
    const gates = Array.from({ length: 5 }, gate);
    const results = gates.map((g) => settle(queue.run('10.0.0.1', g.work)));
    const refused = (await results[4]) as { error: DomainError };
    expect(refused.error).toBeInstanceOf(DomainError);
    expect(refused.error.code).toBe('rate_limited');
    expect(refused.error.retryAfterSecs).toBe(1);
    for (const g of gates.slice(0, 4)) {
      g.open();
      await tick();
    }
    expect(await Promise.all(results.slice(0, 4))).toEqual(Array(4).fill({ value: 'hashed' }));
  });

  it('gives a newcomer the newest place of the address holding the most, and serves addresses in turn', async () => {
    const queue = new PasswordQueue({ concurrency: 1, queue: 4 });
    const flood = Array.from({ length: 5 }, gate);
    const floodResults = flood.map((g) => settle(queue.run('10.0.0.66', g.work)));
    // every place taken by one address: a sign-in from another takes the flood's newest place
    const real = gate();
    const realResult = settle(queue.run('10.0.0.7', real.work));
    expect(((await floodResults[4]) as { error: DomainError }).error.code).toBe('rate_limited');
    // addresses take turns: the flood's next waiter, then the real sign-in, ahead of the flood's older waiters
    flood[0]!.open();
    await tick();
    expect(flood[1]!.started).toBe(true);
    expect(real.started).toBe(false);
    flood[1]!.open();
    await tick();
    expect(real.started).toBe(true);
    expect(flood[2]!.started).toBe(false);
    real.open();
    expect(await realResult).toEqual({ value: 'hashed' });
    await tick();
    for (const g of flood.slice(2, 4)) {
      g.open();
      await tick();
    }
    expect(await Promise.all(floodResults.slice(0, 4))).toEqual(Array(4).fill({ value: 'hashed' }));
  });

  it('with every place held by different addresses, refuses any newcomer: none holds more than its share', async () => {
    const queue = new PasswordQueue({ concurrency: 1, queue: 1 });
    const a = gate();
    const b = gate();
    const ra = settle(queue.run('10.0.0.1', a.work));
    const rb = settle(queue.run('10.0.0.2', b.work));
    for (const address of ['10.0.0.2', '10.0.0.3']) {
      const again = await settle(queue.run(address, gate().work));
      expect((again as { error: DomainError }).error.code).toBe('rate_limited');
    }
    a.open();
    await tick();
    b.open();
    expect([await ra, await rb]).toEqual([{ value: 'hashed' }, { value: 'hashed' }]);
  });
});

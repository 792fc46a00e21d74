import { describe, expect, it } from 'vitest';
import { FixedWindows, RequestLimiter } from './rate-limit.js';

describe('FixedWindows', () => {
  const start = 1_000_000;

  it('allows the budget within a window, then refuses until the window ends, counting refused requests too', () => {
    const windows = new FixedWindows(3, 10, start);
    expect([1, 2, 3].map((i) => windows.take('a', 1, start + i))).toEqual([
      { allowed: true, limit: 3, remaining: 2, resetSecs: 10 },
      { allowed: true, limit: 3, remaining: 1, resetSecs: 10 },
      { allowed: true, limit: 3, remaining: 0, resetSecs: 10 },
    ]);
    expect(windows.take('a', 1, start + 9_001)).toEqual({ allowed: false, limit: 3, remaining: 0, resetSecs: 1 });
    // the window opened at start + 1 ends at start + 10,001
    expect(windows.take('a', 1, start + 10_000)).toMatchObject({ allowed: false, resetSecs: 1 });
    expect(windows.take('a', 1, start + 10_001)).toEqual({ allowed: true, limit: 3, remaining: 2, resetSecs: 10 });
  });

  it('keeps a window per key', () => {
    const windows = new FixedWindows(1, 1, start);
    expect(windows.take('a', 1, start).allowed).toBe(true);
    expect(windows.take('a', 1, start).allowed).toBe(false);
    expect(windows.take('b', 1, start).allowed).toBe(true);
  });

  it('takes several points at once: a take past what is left is refused and uses them all', () => {
    const windows = new FixedWindows(10, 60, start);
    expect(windows.take('a', 5, start)).toMatchObject({ allowed: true, remaining: 5 });
    expect(windows.take('a', 6, start)).toMatchObject({ allowed: false, remaining: 0 });
    expect(windows.take('a', 1, start)).toMatchObject({ allowed: false, remaining: 0 });
  });

  it('drops ended windows a generation later, all at once, and keeps counting open ones meanwhile', () => {
    const windows = new FixedWindows(5, 1, start);
    for (let i = 0; i < 1000; i++) windows.take(`client-${i}`, 1, start);
    windows.take('late', 1, start + 999);
    expect(windows.size).toBe(1001);
    // a duration on, they are the previous generation: an ended window opens anew, an open one still counts
    expect(windows.take('client-1', 1, start + 1_000)).toMatchObject({ allowed: true, remaining: 4 });
    expect(windows.size).toBe(1002);
    expect(windows.take('late', 1, start + 1_500)).toMatchObject({ allowed: true, remaining: 3 });
    // another duration on, the first generation is dropped whole
    windows.take('next', 1, start + 2_000);
    expect(windows.size).toBe(2);
  });

  it('forgets every window after a whole generation without a request', () => {
    const windows = new FixedWindows(5, 1, start);
    for (let i = 0; i < 100; i++) windows.take(`client-${i}`, 1, start + 500);
    expect(windows.take('client-1', 1, start + 2_100)).toMatchObject({ allowed: true, remaining: 4 });
    expect(windows.size).toBe(1);
  });
});

describe('RequestLimiter', () => {
  const budget = (points: number) => ({ points, durationSecs: 60 });
  const budgets = { 'public-reads': budget(10), 'private-reads': budget(7), 'order-writes': budget(1), login: budget(5), registration: budget(5) };

  it('gives each worker process its share of every budget, at least one request', () => {
    const limiter = new RequestLimiter({ budgets, processes: 3 });
    expect(limiter.take('public-reads', 'address', 'x').limit).toBe(3);
    expect(limiter.take('private-reads', 'account', 'y').limit).toBe(2);
    expect(limiter.take('order-writes', 'account', 'y').limit).toBe(1);
  });

  it('keeps accounts and addresses apart, whatever their ids look like', () => {
    const limiter = new RequestLimiter({ budgets, processes: 1 });
    expect(limiter.take('order-writes', 'address', 'same').allowed).toBe(true);
    expect(limiter.take('order-writes', 'address', 'same').allowed).toBe(false);
    expect(limiter.take('order-writes', 'account', 'same').allowed).toBe(true);
    expect(limiter.take('public-reads', 'address', 'same')).toMatchObject({ allowed: true, remaining: 9 });
  });

  it("keeps API keys' budgets apart from the accounts' and the addresses'", () => {
    const limiter = new RequestLimiter({ budgets, keyBudgets: { 'private-reads': budget(2), 'order-writes': budget(4) }, processes: 1 });
    expect(limiter.takeKey('private-reads', 'k1')).toMatchObject({ limit: 2, remaining: 1 });
    expect(limiter.take('private-reads', 'account', 'k1')).toMatchObject({ limit: 7, remaining: 6 });
    expect(limiter.takeKey('login', 'k1')).toBeUndefined();
  });
});

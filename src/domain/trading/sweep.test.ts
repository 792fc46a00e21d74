import { afterEach, describe, expect, it, vi } from 'vitest';
import { startExpirySweep } from './sweep.js';

afterEach(() => {
  vi.useRealTimers();
});

describe('startExpirySweep', () => {
  it('runs a pass every interval, never two at once, reports failures and goes on', async () => {
    vi.useFakeTimers();
    let running = 0;
    let most = 0;
    let passes = 0;
    const finish: Array<() => void> = [];
    const errors: unknown[] = [];
    const trading = {
      expireOrders: () => {
        passes += 1;
        running += 1;
        most = Math.max(most, running);
        return new Promise<number>((resolve, reject) => {
          finish.push(() => {
            running -= 1;
            if (passes === 2) reject(new Error('database went away'));
            else resolve(0);
          });
        });
      },
    };
    const sweep = startExpirySweep(trading, 1000, (e) => errors.push(e));
    await vi.advanceTimersByTimeAsync(999);
    expect(passes).toBe(0);
    await vi.advanceTimersByTimeAsync(1);
    expect(passes).toBe(1);
    // A slow pass: no second one starts while it runs.
    await vi.advanceTimersByTimeAsync(5000);
    expect(passes).toBe(1);
    finish.shift()!();
    await vi.advanceTimersByTimeAsync(1000);
    expect(passes).toBe(2);
    finish.shift()!();
    await vi.advanceTimersByTimeAsync(1000);
    expect(passes).toBe(3);
    expect(errors).toEqual([new Error('database went away')]);
    expect(most).toBe(1);

    // stop() waits for the running pass, and no pass starts afterwards.
    let stopped = false;
    const stopping = sweep.stop().then(() => (stopped = true));
    await vi.advanceTimersByTimeAsync(0);
    expect(stopped).toBe(false);
    finish.shift()!();
    await stopping;
    await vi.advanceTimersByTimeAsync(10_000);
    expect(passes).toBe(3);
  });

  it('stops at once when no pass is running', async () => {
    vi.useFakeTimers();
    const trading = { expireOrders: vi.fn(() => Promise.resolve(0)) };
    const sweep = startExpirySweep(trading, 1000, () => {});
    await sweep.stop();
    await vi.advanceTimersByTimeAsync(5000);
    expect(trading.expireOrders).not.toHaveBeenCalled();
  });
});

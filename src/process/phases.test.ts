import { describe, expect, it } from 'vitest';
import { Phases } from './phases.js';

describe('Phases', () => {
  it('stops what started in the reverse order, each after the one before has finished', async () => {
    const phases = new Phases();
    const done: string[] = [];
    phases.started(() => done.push('database'));
    phases.started(async () => {
      await new Promise((resolve) => setImmediate(resolve));
      done.push('pools');
    });
    phases.started(() => done.push('http'));
    await phases.stop();
    expect(done).toEqual(['http', 'pools', 'database']);
  });

  it('stops once, however often asked, also while stopping', async () => {
    const phases = new Phases();
    let stops = 0;
    phases.started(async () => {
      await new Promise((resolve) => setImmediate(resolve));
      stops++;
    });
    await Promise.all([phases.stop(), phases.stop()]);
    await phases.stop();
    expect(stops).toBe(1);
  });

  it('gives the first failure, leaving the parts before it running', async () => {
    const phases = new Phases();
    const done: string[] = [];
    phases.started(() => done.push('database'));
    phases.started(() => {
      throw new Error('pools would not close');
    });
    await expect(phases.stop()).rejects.toThrow('pools would not close');
    expect(done).toEqual([]);
  });
});

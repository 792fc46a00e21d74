import { describe, expect, it } from 'vitest';
import { LoginGuard } from './login-guard.js';

describe('LoginGuard', () => {
  it('lets the free failures through, then blocks for base x 2^k, capped, and forgets the pair on success', async () => {
    const guard = new LoginGuard({ freeFailures: 2, backoffBaseMs: 1000, backoffMaxSecs: 4 });
    const waits: Array<number | undefined> = [];
    for (let i = 0; i < 6; i++) {
      await guard.failed('Ada@Example.com', '10.0.0.1');
      waits.push(await guard.retryAfter('ada@example.com', '10.0.0.1'));
    }
    expect(waits.map((w) => (w === undefined ? undefined : Math.round(w)))).toEqual([undefined, undefined, 1, 2, 4, 4]);
    // another address is not held back by this pair (its own counts, and the email-wide threshold is 4 x 2)
    expect(await guard.retryAfter('ada@example.com', '10.0.0.2')).toBeUndefined();
    await guard.succeeded('ada@example.com', '10.0.0.1');
    expect(await guard.retryAfter('ada@example.com', '10.0.0.1')).toBeUndefined();
  });

  it('backs off one email for the addresses that failed for it, and one address for any email, past four times the threshold', async () => {
    const guard = new LoginGuard({ freeFailures: 1, backoffBaseMs: 1000, backoffMaxSecs: 60 });
    for (let i = 0; i < 5; i++) await guard.failed('victim@example.com', `10.0.1.${i}`);
    expect(await guard.retryAfter('victim@example.com', '10.0.1.0')).toBeCloseTo(1, 0);
    expect(await guard.retryAfter('victim@example.com', '10.0.9.9')).toBeUndefined();
    for (let i = 0; i < 5; i++) await guard.failed(`user${i}@example.com`, '10.0.2.1');
    expect(await guard.retryAfter('someone-else@example.com', '10.0.2.1')).toBeCloseTo(1, 0);
    expect(await guard.retryAfter('someone-else@example.com', '10.0.2.2')).toBeUndefined();
  });

  it('never holds back the owner for others\' failures: from an address without failures, or one that signed in before; its own back-off is capped', async () => {
    const settings = { freeFailures: 5, backoffBaseMs: 1000, backoffMaxSecs: 900 };
    const guard = new LoginGuard(settings);
    const email = 'admin@example.com';
    // the owner signed in from home before the attack
    await guard.succeeded(email, '10.9.0.1');
    // 2,000 failures from 200 addresses, far past every threshold
    for (let round = 0; round < 10; round++) for (let a = 0; a < 200; a++) await guard.failed(email, `10.1.${a >> 8}.${a & 255}`);
    expect(await guard.retryAfter(email, '10.9.0.2')).toBeUndefined();
    // even after a typo of the owner's from home, the others' failures do not hold home back
    await guard.failed(email, '10.9.0.1');
    expect(await guard.retryAfter(email, '10.9.0.1')).toBeUndefined();
    // the attackers' addresses are held back, never for longer than the maximum
    const attacker = await guard.retryAfter(email, '10.1.0.7');
    expect(attacker).toBeGreaterThan(0);
    expect(attacker).toBeLessThanOrEqual(settings.backoffMaxSecs);
    // the worst case for the owner: their own failures from one address, one back-off of at most the maximum
    for (let i = 0; i < 30; i++) await guard.failed(email, '10.9.0.3');
    const own = await guard.retryAfter(email, '10.9.0.3');
    expect(own).toBeGreaterThan(settings.backoffMaxSecs - 1);
    expect(own).toBeLessThanOrEqual(settings.backoffMaxSecs);
  });
});

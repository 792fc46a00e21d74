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

  it('backs off one email from any address, and one address for any email, past four times the threshold', async () => {
    const guard = new LoginGuard({ freeFailures: 1, backoffBaseMs: 1000, backoffMaxSecs: 60 });
    for (let i = 0; i < 5; i++) await guard.failed('victim@example.com', `10.0.1.${i}`);
    expect(await guard.retryAfter('victim@example.com', '10.0.9.9')).toBeCloseTo(1, 0);
    for (let i = 0; i < 5; i++) await guard.failed(`user${i}@example.com`, '10.0.2.1');
    expect(await guard.retryAfter('someone-else@example.com', '10.0.2.1')).toBeCloseTo(1, 0);
    expect(await guard.retryAfter('someone-else@example.com', '10.0.2.2')).toBeUndefined();
  });
});

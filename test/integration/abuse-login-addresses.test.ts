import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { requestFrom, type AddressedAnswer } from '../support/addresses.js';
import { TestService } from '../support/service.js';

/**
 * Sign-in under attack from many client addresses (distinct loopback addresses, no proxy): others' failures
 * never keep an owner out, and a flood of bogus sign-ins from some addresses neither refuses the real
 * sign-ins of others nor a burst of registrations from one address within its budget.
 */

const LOGIN = '/api/auth/login';
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

describe('failures of one email from many addresses', () => {
  let api: TestService;
  const owner = { email: 'owner@example.com', password: 'the-owners-password' };
  const admin = { email: 'ops@example.com', password: 'the-operators-password' };
  beforeAll(async () => {
    // The default back-off (5 free failures a pair, 20 an email, 1 s doubling, at most 900 s); the login
    // budget and the hashing queue out of the way, so that what holds is the back-off.
    api = await TestService.start({ RATE_LIMITS: 'on', RATE_LIMIT_LOGIN: '100000/60', ADMIN_EMAIL: admin.email, ADMIN_PASSWORD: admin.password });
    expect((await requestFrom('127.0.0.1', api.baseUrl, 'POST', '/api/auth/register', owner)).status).toBe(201);
  });
  afterAll(() => api.stop());

  /** `addresses` attackers at once, each trying `perAddress` wrong passwords for `email` in turn. */
  async function attack(email: string, firstAddress: number, addresses: number, perAddress: number): Promise<AddressedAnswer[]> {
    const answers: AddressedAnswer[] = [];
    await Promise.all(
      Array.from({ length: addresses }, async (_, a) => {
        const address = `127.0.3.${firstAddress + a}`;
        for (let i = 0; i < perAddress; i++) answers.push(await requestFrom(address, api.baseUrl, 'POST', LOGIN, { email, password: `guess-${a}-${i}` }));
      }),
    );
    return answers;
  }

  it.each([
    ['a USER account', owner, 1],
    ['the ADMIN account', admin, 101],
  ])('the owner of %s signs in with the right password during the attack, from a new address and from one that signed in before', { timeout: 180_000 }, async (_, account, first) => {
    // the owner signed in from home before
    expect((await requestFrom('127.0.2.1', api.baseUrl, 'POST', LOGIN, account)).status).toBe(200);
    // 24 failures from 8 addresses: past the email's threshold (20)
    const before = await attack(account.email, first, 8, 3);
    expect(before.every((a) => a.status === 401 || a.status === 429)).toBe(true);
    // the attack goes on, from 8 more addresses, while the owner signs in
    const during = attack(account.email, first + 8, 8, 3);
    const fromNew = await requestFrom('127.0.9.9', api.baseUrl, 'POST', LOGIN, account);
    const fromHome = await requestFrom('127.0.2.1', api.baseUrl, 'POST', LOGIN, account);
    const answers = [...before, ...(await during)];
    expect([fromNew.status, fromHome.status], JSON.stringify([fromNew.body, fromHome.body])).toEqual([200, 200]);
    expect(fromNew.body.user.email).toBe(account.email);
    // the attackers were slowed: their addresses, having failed, are held back past the email's threshold
    const held = answers.filter((a) => a.status === 429 && a.body.error.message.startsWith('too many failed sign-ins'));
    expect(held.length).toBeGreaterThan(0);
    for (const answer of held) {
      const retryAfter = Number(answer.headers['retry-after']);
      expect(retryAfter).toBeGreaterThanOrEqual(1);
      expect(retryAfter).toBeLessThanOrEqual(900);
    }
    // and an attacking address stays held back for the owner's email even with the right password
    const fromAttacker = await requestFrom(`127.0.3.${first}`, api.baseUrl, 'POST', LOGIN, account);
    expect(fromAttacker.status).toBe(429);
  });
});

describe('a flood of bogus sign-ins from other addresses', () => {
  let api: TestService;
  beforeAll(async () => {
    // The default hashing queue; budgets off, so that what holds is the queue (and the back-off).
    api = await TestService.start({ RATE_LIMITS: 'off', PASSWORD_HASH_QUEUE: '', PASSWORD_HASH_CONCURRENCY: '' });
  });
  afterAll(() => api.stop());

  it('10 of 10 real sign-ins succeed while 8 addresses keep 32 bogus ones in flight', { timeout: 180_000 }, async () => {
    const users = Array.from({ length: 10 }, (_, i) => ({ email: `real-${i}@example.com`, password: `real-password-${i}` }));
    for (const user of users) expect((await requestFrom('127.0.0.1', api.baseUrl, 'POST', '/api/auth/register', user)).status).toBe(201);

    let flooding = true;
    const floodAnswers: number[] = [];
    const deadline = Date.now() + 60_000;
    // 8 addresses, four bogus sign-ins in flight each (more than every hashing place), of ever-new emails
    // (at most 200 a lane, within 60 s)
    const flood = Promise.all(
      Array.from({ length: 32 }, async (_, lane) => {
        const address = `127.0.4.${1 + (lane % 8)}`;
        for (let i = 0; flooding && i < 200 && Date.now() < deadline; i++) {
          floodAnswers.push((await requestFrom(address, api.baseUrl, 'POST', LOGIN, { email: `bogus-${lane}-${i}@example.com`, password: 'guess' })).status);
        }
      }),
    );
    // the flood fills every place before the real sign-ins come
    for (let waited = 0; !floodAnswers.includes(429) && waited < 100; waited++) await sleep(100);
    expect(floodAnswers).toContain(429);
    const real = await Promise.all(users.map((user, i) => requestFrom(`127.0.5.${1 + i}`, api.baseUrl, 'POST', LOGIN, user)));
    flooding = false;
    await flood;
    expect(real.map((answer) => answer.status), JSON.stringify(real.map((answer) => answer.body))).toEqual(Array(10).fill(200));
    expect(floodAnswers.every((status) => status === 401 || status === 429)).toBe(true);
  });
});

describe('registrations from one address', () => {
  let api: TestService;
  beforeAll(async () => {
    api = await TestService.start({ RATE_LIMITS: 'on', RATE_LIMIT_REGISTRATION: '24/3600', PASSWORD_HASH_QUEUE: '', PASSWORD_HASH_CONCURRENCY: '' });
  });
  afterAll(() => api.stop());

  it('24 at once, inside the address\'s registration budget, all succeed', { timeout: 120_000 }, async () => {
    const answers = await Promise.all(
      Array.from({ length: 24 }, (_, i) => requestFrom('127.0.6.1', api.baseUrl, 'POST', '/api/auth/register', { email: `burst-${i}@example.com`, password: 'burst-password' })),
    );
    expect(answers.map((answer) => answer.status), JSON.stringify(answers.filter((a) => a.status !== 201).map((a) => a.body))).toEqual(Array(24).fill(201));
    // the budget still holds: the 25th is refused
    expect((await requestFrom('127.0.6.1', api.baseUrl, 'POST', '/api/auth/register', { email: 'burst-25@example.com', password: 'burst-password' })).status).toBe(429);
  });
});

import { spawn } from 'node:child_process';
import { performance } from 'node:perf_hooks';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadAbuseConfig } from '../../src/config.js';
import { describeLatency, p99, stallBound } from '../support/latency.js';
import { ContractChecker } from '../support/contract.js';
import { TestService } from '../support/service.js';

/**
 * Sign-in under attack: failed attempts back off exponentially (and the back-off ends), and a burst of bad
 * sign-ins from one address neither slows other requests nor keeps a valid sign-in from that address waiting
 * (the hashing queue refuses it at once once the address holds every place).
 */

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

describe('failed sign-ins', () => {
  let api: TestService;
  beforeAll(async () => {
    // Budgets on, the login budget out of the way: what is tested is the back-off (1 s, doubling, at most 2 s).
    api = await TestService.start({ RATE_LIMITS: 'on', RATE_LIMIT_LOGIN: '10000/60', LOGIN_FREE_FAILURES: '5', LOGIN_BACKOFF_BASE_MS: '1000', LOGIN_BACKOFF_MAX_SECS: '2' });
  });
  afterAll(() => api.stop());

  it('30 wrong passwords, then the right one is 429 with Retry-After; after the wait it signs in', { timeout: 120_000 }, async () => {
    const email = 'victim@example.com';
    await api.register({ email, password: 'the-right-password' });
    const statuses: number[] = [];
    for (let i = 0; i < 30; i++) statuses.push((await api.post('/api/auth/login', { email, password: `wrong-${i}` })).status);
    expect(statuses.slice(0, 5)).toEqual([401, 401, 401, 401, 401]);
    expect(statuses.every((s) => s === 401 || s === 429)).toBe(true);
    expect(statuses.filter((s) => s === 429).length).toBeGreaterThan(10);

    const refused = await api.post('/api/auth/login', { email, password: 'the-right-password' });
    expect(refused.status).toBe(429);
    expect(refused.body.error.code).toBe('rate_limited');
    const retryAfter = Number(refused.headers.get('retry-after'));
    expect(retryAfter).toBeGreaterThanOrEqual(1);
    expect(retryAfter).toBeLessThanOrEqual(2);

    await sleep(retryAfter * 1000 + 100);
    const accepted = await api.post('/api/auth/login', { email, password: 'the-right-password' });
    expect(accepted.status).toBe(200);
    // the success cleared the count of this email from this address: a mistake is a plain 401 again
    expect((await api.post('/api/auth/login', { email, password: 'one-typo' })).status).toBe(401);
  });

  it('does not hold back another email from the same address for the failures of one', async () => {
    const other = await api.register({ email: 'bystander@example.com', password: 'bystander-password' });
    expect((await api.post('/api/auth/login', { email: 'bystander@example.com', password: 'bystander-password' })).status).toBe(200);
    expect(other.user.email).toBe('bystander@example.com');
  });
});

describe('a burst of bad sign-ins', () => {
  let api: TestService;
  beforeAll(async () => {
    // The default hashing queue (by core count); budgets out of the way, so that the queue is what holds.
    api = await TestService.start({ RATE_LIMITS: 'off', PASSWORD_HASH_QUEUE: '', PASSWORD_HASH_CONCURRENCY: '', ADMIN_EMAIL: 'ops@example.com', ADMIN_PASSWORD: 'ops-password' });
    const admin = (await api.post('/api/auth/login', { email: 'ops@example.com', password: 'ops-password' })).body.token;
    expect((await api.post('/api/admin/series', { ticker: 'BURST', title: 'Burst', category: 'economics', frequency: 'daily' }, { token: admin })).status).toBe(201);
    for (let i = 0; i < 20; i++) {
      const event = { event_ticker: `BURST-E${i}`, series_ticker: 'BURST', title: `Event ${i}`, strike_date: '2031-01-01T00:00:00Z' };
      expect((await api.post('/api/admin/events', event, { token: admin })).status).toBe(201);
    }
  });
  afterAll(() => api.stop());

  it('100 concurrent bad sign-ins: a reader of /api/events is not stalled (see stallBound), a valid sign-in is answered within 1 s or refused at once', { timeout: 120_000 }, async () => {
    await api.register({ email: 'regular@example.com', password: 'regular-password' });
    const read = async (): Promise<number> => {
      const started = performance.now();
      const response = await api.get('/api/events?limit=20');
      expect(response.status).toBe(200);
      return performance.now() - started;
    };
    // warm-up of the reader's path, then its latency without the burst; and one valid sign-in alone
    for (let i = 0; i < 20; i++) await read();
    const baseline: number[] = [];
    for (let i = 0; i < 100; i++) baseline.push(await read());
    const aloneStarted = performance.now();
    expect((await api.post('/api/auth/login', { email: 'regular@example.com', password: 'regular-password' })).status).toBe(200);
    const aloneMs = performance.now() - aloneStarted;

    let reading = true;
    const latencies: number[] = [];
    const reader = (async () => {
      while (reading) latencies.push(await read());
    })();

    // The attacker is another process, as it would be.
    const attacker = burstOfBadSignIns(api.baseUrl, 100);
    await attacker.started;
    await sleep(20);
    const started = performance.now();
    const valid = await api.post('/api/auth/login', { email: 'regular@example.com', password: 'regular-password' });
    const validMs = performance.now() - started;
    const answers = await attacker.answers;
    reading = false;
    await reader;

    for (const answer of answers) {
      expect(checker.check({ method: 'POST', path: '/api/auth/login' }, answer)).toEqual([]);
    }
    const statuses = answers.map((a) => a.status);
    expect(statuses.every((s) => s === 401 || s === 429)).toBe(true);
    // One address may hold every hashing place (running and waiting), no more: the rest are refused at once.
    // A place a finished hash frees while the burst is still arriving goes to a later request of the burst.
    // The valid sign-in comes from the same address: when it was hashed, it held one of those places.
    const { concurrency, queue } = loadAbuseConfig({}).passwordHashing;
    const lastRefusal = Math.max(...answers.filter((a) => a.status === 429).map((a) => a.at));
    const freedMeanwhile = answers.filter((a) => a.status === 401 && a.at < lastRefusal).length;
    const heldByValid = valid.status === 429 ? 0 : 1;
    expect(statuses.filter((s) => s === 429).length).toBeGreaterThanOrEqual(100 - concurrency - queue - freedMeanwhile - heldByValid);
    expect(answers.find((a) => a.status === 429)!.retryAfter).toBe('1');
    // within 1 s; on a machine so loaded that one sign-in alone takes longer, within 1.5 times that
    console.log(`valid sign-in during the burst: ${valid.status} in ${validMs.toFixed(0)} ms (alone: ${aloneMs.toFixed(0)} ms)`);
    if (valid.status === 200) expect(validMs, `a sign-in alone took ${aloneMs.toFixed(0)} ms`).toBeLessThan(Math.max(1000, 3 * aloneMs));
    else {
      // refused at once: before any hashing (a hash takes about 200 ms of a core)
      expect(valid.status).toBe(429);
      expect(validMs).toBeLessThan(Math.max(500, 3 * p99(baseline)));
    }
    expect(latencies.length).toBeGreaterThan(10);
    console.log(describeLatency('reader of /api/events during 100 bad sign-ins', baseline, latencies));
    expect(p99(latencies), `reader latencies (ms), baseline p99 ${p99(baseline).toFixed(0)} ms: ${latencies.map((l) => l.toFixed(0)).join(' ')}`).toBeLessThan(stallBound(baseline));
  });
});

const checker = new ContractChecker();

interface Answer {
  status: number;
  contentType: string | null;
  body: unknown;
  retryAfter: string | null;
  /** When the answer arrived, on the attacker's clock. */
  at: number;
}

/** `count` concurrent bad sign-ins from a child process; `started` once it is about to send them. */
function burstOfBadSignIns(baseUrl: string, count: number): { started: Promise<void>; answers: Promise<Answer[]> } {
  const script = `
    const url = ${JSON.stringify(`${baseUrl}/api/auth/login`)};
    process.stdout.write('started\\n');
    Promise.all(Array.from({ length: ${count} }, (_, i) =>
      fetch(url, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ email: 'attacker-' + i + '@example.com', password: 'guess' }) })
        .then(async (r) => ({ status: r.status, contentType: r.headers.get('content-type'), body: await r.json(), retryAfter: r.headers.get('retry-after'), at: performance.now() })),
    )).then((answers) => process.stdout.write(JSON.stringify(answers) + '\\n'));
  `;
  const child = spawn(process.execPath, ['-e', script], { stdio: ['ignore', 'pipe', 'inherit'] });
  let output = '';
  let markStarted: () => void;
  const started = new Promise<void>((resolve) => (markStarted = resolve));
  const answers = new Promise<Answer[]>((resolve, reject) => {
    child.stdout.on('data', (chunk: Buffer) => {
      output += chunk.toString();
      if (output.startsWith('started\n')) markStarted();
    });
    child.on('error', reject);
    child.on('close', (code) => {
      if (code !== 0) return reject(new Error(`the attacker process exited with ${code}`));
      resolve(JSON.parse(output.slice('started\n'.length)) as Answer[]);
    });
  });
  return { started, answers };
}

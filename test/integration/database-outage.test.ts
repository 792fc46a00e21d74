import { randomBytes } from 'node:crypto';
import { appendFile, chmod, mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config.js';
import { findFreePort, startEmbeddedPostgres, type EmbeddedDatabase } from '../../src/db/embedded.js';
import { createLogger } from '../../src/logger.js';
import { startService, type RunningService } from '../../src/server.js';
import { ApiClient, TestService, UNLIMITED, type ApiResponse } from '../support/service.js';

/**
 * The database going away under a running service: every request is answered 503 `unavailable` with
 * Retry-After (never 500) until it is back; the embedded PostgreSQL is started again by the service after
 * a kill -9 (crash recovery: nothing committed is lost), and when it cannot be, /livez answers 503.
 */

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
const directories: string[] = [];

/** A data directory the `postgres` OS user can reach when the tests run as root. */
async function dataDirectory(): Promise<string> {
  const dir = await mkdtemp(path.join(tmpdir(), 'dots-outage-'));
  await chmod(dir, 0o755);
  directories.push(dir);
  return dir;
}

afterAll(async () => {
  for (const dir of directories) await rm(dir, { recursive: true, force: true });
});

/** The embedded service of a new DATA_DIR, in this process. */
async function embeddedService(dataDir: string): Promise<RunningService> {
  const config = loadConfig({ PORT: '0', LOG_LEVEL: 'silent', DATA_DIR: dataDir, SEED: 'none', ...UNLIMITED });
  const service = await startService(config, createLogger(config.logLevel));
  await service.ready;
  return service;
}

/** The postmaster of the embedded cluster of `dataDir`. */
async function postmasterPid(dataDir: string): Promise<number> {
  return Number((await readFile(path.join(dataDir, 'pg', 'postmaster.pid'), 'utf8')).split('\n')[0]);
}

/** Polls `request` every 200 ms until it answers `status`, for at most `timeoutMs`; every answer it got. */
async function until(request: () => Promise<ApiResponse>, status: number, timeoutMs: number): Promise<ApiResponse[]> {
  const answers: ApiResponse[] = [];
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    const answer = await request();
    answers.push(answer);
    if (answer.status === status) return answers;
    await sleep(200);
  }
  return answers;
}

function expectUnavailable(answer: ApiResponse): void {
  expect(answer.status, JSON.stringify(answer.body)).toBe(503);
  expect(answer.body.error.code).toBe('unavailable');
  expect(Number(answer.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
}

describe('the embedded PostgreSQL killed under load', () => {
  it('is started again by the service: 200 again within 30 s, 503 with Retry-After meanwhile, nothing committed lost', { timeout: 180_000 }, async () => {
    const dataDir = await dataDirectory();
    const service = await embeddedService(dataDir);
    const api = new ApiClient(service.url);
    try {
      const { token } = await api.register();
      // four clients registering accounts, one after another each, until told to stop (at most 90 s)
      let loading = true;
      const committed: string[] = [];
      const statuses: number[] = [];
      const deadline = Date.now() + 90_000;
      const load = Promise.all(
        Array.from({ length: 4 }, async () => {
          while (loading && Date.now() < deadline) {
            const email = `load-${randomBytes(6).toString('hex')}@example.com`;
            const answer = await api.post('/api/auth/register', { email, password: 'load-password' });
            statuses.push(answer.status);
            if (answer.status === 201) committed.push(email);
            else expectUnavailable(answer);
          }
        }),
      );
      while (committed.length < 8 && Date.now() < deadline) await sleep(50);
      expect(committed.length).toBeGreaterThanOrEqual(8);

      process.kill(await postmasterPid(dataDir), 'SIGKILL');
      const killedAt = Date.now();
      const answers = await until(() => api.get('/api/auth/me', { token }), 200, 30_000);
      const recoveredMs = Date.now() - killedAt;
      expect(answers.at(-1)!.status, `no 200 within 30 s of the kill: ${answers.map((a) => a.status).join(' ')}`).toBe(200);
      for (const answer of answers.slice(0, -1)) expectUnavailable(answer);
      // the load goes on past the recovery, then stops
      const before = committed.length;
      while (committed.length < before + 4 && Date.now() < deadline) await sleep(50);
      loading = false;
      await load;
      console.log(`200 again ${recoveredMs} ms after the kill; answers under load: ${statuses.filter((s) => s === 201).length} x 201, ${statuses.filter((s) => s === 503).length} x 503`);

      expect(statuses.every((status) => status === 201 || status === 503)).toBe(true);
      expect(statuses).toContain(503);
      // every registration answered 201 is there, before the kill and after
      const found = await service.db('users').whereIn('email', committed).count<{ count: string }[]>('* as count');
      expect(Number(found[0]!.count)).toBe(committed.length);
      expect((await api.get('/livez')).status).toBe(200);
      expect((await api.untilReady()).status).toBe(200);
    } finally {
      await service.stop();
    }
  });

  it('when it cannot be started again: /livez answers 503 and the service is told to stop', { timeout: 120_000 }, async () => {
    const dataDir = await dataDirectory();
    const service = await embeddedService(dataDir);
    const api = new ApiClient(service.url);
    try {
      expect((await api.get('/livez')).status).toBe(200);
      // a setting PostgreSQL refuses at start: every attempt at starting it again fails
      await appendFile(path.join(dataDir, 'pg', 'postgresql.conf'), '\nshared_buffers = nonsense\n');
      process.kill(await postmasterPid(dataDir), 'SIGKILL');
      const lost = await Promise.race([service.databaseLost, sleep(60_000).then(() => undefined)]);
      expect(lost?.message).toMatch(/could not be started again/);
      const livez = await api.get('/livez');
      expect(livez.status).toBe(503);
      expect(livez.body.error).toEqual({ code: 'unavailable', message: 'the embedded database is gone and could not be started again' });
      expectUnavailable(await api.get('/api/events'));
    } finally {
      await service.stop();
    }
  });
});

describe('an external database stopped and started again', () => {
  it('answers 503 with Retry-After while it is down, and 200 once it is back, without a restart of the service', { timeout: 180_000 }, async () => {
    const dataDir = await dataDirectory();
    const port = await findFreePort();
    let database: EmbeddedDatabase = await startEmbeddedPostgres({ dataDir, port });
    const api = await TestService.start({}, database.url);
    try {
      const { token, user } = await api.register({ email: 'outage@example.com' });
      expect((await api.get('/api/events')).status).toBe(200);

      await database.stop();
      for (const request of [
        () => api.get('/api/events'),
        () => api.get('/api/auth/me', { token }),
        () => api.post('/api/auth/login', { email: 'outage@example.com', password: 'correct-horse-battery' }),
        () => api.get('/api/portfolio/balance', { token }),
      ]) {
        expectUnavailable(await request());
      }
      expect((await api.get('/readyz')).status).toBe(503);
      expect((await api.get('/livez')).status).toBe(200);

      database = await startEmbeddedPostgres({ dataDir, port });
      const answers = await until(() => api.get('/api/auth/me', { token }), 200, 30_000);
      expect(answers.at(-1)!.status).toBe(200);
      expect(answers.at(-1)!.body.user.id).toBe(user.id);
      expect((await api.get('/api/events')).status).toBe(200);
      expect((await api.post('/api/auth/login', { email: 'outage@example.com', password: 'correct-horse-battery' })).status).toBe(200);
      expect((await api.untilReady()).status).toBe(200);
    } finally {
      await api.stop();
      await database.stop();
    }
  });
});

import { request as httpRequest } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { exitOf, ProcessCluster } from '../support/processes.js';
import { loadConfig } from '../../src/config.js';
import { createDb } from '../../src/db/knex.js';
import { createLogger } from '../../src/logger.js';
import { startService } from '../../src/server.js';
import { ApiClient, createTestDatabase, TestService, UNLIMITED } from '../support/service.js';

/** Sends the head of a POST now and its body when `finish` is called: a request in flight for as long as the test wants. */
function slowRegister(url: string, email: string): { finish: () => void; response: Promise<{ status: number; body: string }> } {
  const body = JSON.stringify({ email, password: 'correct-horse-battery' });
  let finish!: () => void;
  const response = new Promise<{ status: number; body: string }>((resolve, reject) => {
    const req = httpRequest(`${url}/api/auth/register`, { method: 'POST', headers: { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) } }, (res) => {
      let text = '';
      res.on('data', (chunk: Buffer) => (text += chunk.toString()));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body: text }));
    });
    req.on('error', reject);
    req.flushHeaders();
    req.write(body.slice(0, 10));
    finish = () => req.end(body.slice(10));
  });
  return { finish, response };
}

describe('liveness and readiness', () => {
  let service: TestService;
  beforeAll(async () => {
    service = await TestService.start();
  });
  afterAll(async () => {
    await service?.stop();
  });

  it('/livez and /readyz answer 200 on a started service, never cached; /healthz is unchanged', async () => {
    const live = await service.get('/livez');
    expect(live.status).toBe(200);
    expect(live.body).toEqual({ status: 'ok' });
    expect(live.headers.get('cache-control')).toBe('no-store');
    const ready = await service.get('/readyz');
    expect(ready.status).toBe(200);
    expect(ready.body).toEqual({ status: 'ready', database: 'ok' });
    expect(ready.headers.get('cache-control')).toBe('no-store');
    expect((await service.get('/healthz')).body).toEqual({ status: 'ok', database: 'ok' });
  });
});

describe('readiness during the drain after SIGTERM (a real process)', () => {
  let cluster: ProcessCluster;
  beforeAll(async () => {
    cluster = new ProcessCluster(await createTestDatabase(), {});
  });
  afterAll(() => cluster?.killAll());

  it('answers 503 draining while an in-flight request still completes, then exits 0', async () => {
    const { process: started, api } = await cluster.start({ SHUTDOWN_DELAY_SECS: '3' });
    expect((await api.untilReady()).status).toBe(200);
    // the log says when readiness turned 200
    for (let i = 0; i < 50 && !started.output().includes('ready: the search index is loaded'); i += 1) await new Promise((resolve) => setTimeout(resolve, 50));
    expect(started.output()).toContain('"msg":"ready: the search index is loaded"');
    const inFlight = slowRegister(started.url, 'in-flight@example.com');
    // the request has reached the service (its head is parsed) before the signal
    await new Promise((resolve) => setTimeout(resolve, 200));
    started.child.kill('SIGTERM');
    let ready = await api.get('/readyz');
    for (let i = 0; i < 20 && ready.status === 200; i += 1) {
      await new Promise((resolve) => setTimeout(resolve, 50));
      ready = await api.get('/readyz');
    }
    expect(ready.status).toBe(503);
    expect(ready.body).toEqual({ error: { code: 'unavailable', message: 'draining' } });
    // the process itself still answers
    expect((await api.get('/livez')).status).toBe(200);
    inFlight.finish();
    const done = await inFlight.response;
    expect(done.status).toBe(201);
    expect(JSON.parse(done.body).user.email).toBe('in-flight@example.com');
    expect(await exitOf(started.child)).toBe(0);
  }, 60_000);

  it('without a delay, the listener closes at once and a request in flight still completes', async () => {
    const { process: started, api } = await cluster.start();
    expect((await api.untilReady()).status).toBe(200);
    const inFlight = slowRegister(started.url, 'in-flight-2@example.com');
    await new Promise((resolve) => setTimeout(resolve, 200));
    started.child.kill('SIGTERM');
    await new Promise((resolve) => setTimeout(resolve, 300));
    await expect(fetch(`${started.url}/readyz`)).rejects.toThrow();
    inFlight.finish();
    expect((await inFlight.response).status).toBe(201);
    expect(await exitOf(started.child)).toBe(0);
  }, 60_000);
});

describe('readiness while the search index loads', () => {
  it('is 503 starting until the index has been read whole, then 200', async () => {
    const databaseUrl = await createTestDatabase();
    const config = loadConfig({ PORT: '0', LOG_LEVEL: 'silent', DATABASE_URL: databaseUrl, SEED: 'none', ...UNLIMITED });
    // Holds the index's first read (it reads the events) until released.
    const blocker = createDb(databaseUrl, 1);
    const held = blocker.transaction();
    const tx = await held;
    await tx.raw('lock table tags in access exclusive mode');
    const service = await startService(config, createLogger(config.logLevel));
    try {
      const api = new ApiClient(service.url);
      const starting = await api.get('/readyz');
      expect(starting.status).toBe(503);
      expect(starting.body).toEqual({ error: { code: 'unavailable', message: 'starting' } });
      expect((await api.get('/livez')).status).toBe(200);
      await tx.commit();
      await service.ready;
      expect((await api.get('/readyz')).status).toBe(200);
    } finally {
      await tx.rollback().catch(() => undefined);
      await blocker.destroy();
      await service.stop();
    }
  });
});

// The response checks of ApiClient also cover the 503 shape when the database is gone.
describe('readiness without a database', () => {
  it('is 503 database unavailable once the database stops answering', async () => {
    const service = await TestService.start();
    try {
      const api = new ApiClient(service.baseUrl);
      await service.service.pools.db.destroy();
      const ready = await api.get('/readyz');
      expect(ready.status).toBe(503);
      expect(ready.body).toEqual({ error: { code: 'unavailable', message: 'database unavailable' } });
      expect((await api.get('/livez')).status).toBe(200);
    } finally {
      await service.stop().catch(() => undefined);
    }
  });
});

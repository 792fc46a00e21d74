import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { TestService } from '../support/service.js';

/**
 * Sessions looked up are kept in each process (src/domain/accounts/session-cache.ts) and forgotten when the
 * database announces a change (migration 0015). Two service instances on one database stand for two processes.
 */

let a: TestService;
let b: TestService;

beforeAll(async () => {
  a = await TestService.start();
  b = await TestService.start({}, a.databaseUrl);
});
afterAll(async () => {
  await b?.stop();
  await a?.stop();
});

/** The statements `service` runs on its main pool while `work` runs. */
async function statementsDuring(service: TestService, work: () => Promise<unknown>): Promise<string[]> {
  const statements: string[] = [];
  const listener = (query: { sql: string }) => statements.push(query.sql);
  service.db.on('query', listener);
  try {
    await work();
  } finally {
    service.db.off('query', listener);
  }
  return statements;
}

const readsSession = (statements: string[]) => statements.some((sql) => /from "sessions"/.test(sql));

/** Polls `check` until it holds (a change reaches another process by notification, within milliseconds). */
async function eventually(check: () => Promise<boolean>, what: string): Promise<void> {
  const deadline = Date.now() + 5000;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`not within 5 s: ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

describe('session cache', () => {
  it('answers a token again without asking the database', async () => {
    const { token } = await a.register();
    expect(readsSession(await statementsDuring(a, () => a.read('/api/auth/me', token)))).toBe(true);
    const again = await statementsDuring(a, () => a.read('/api/auth/me', token));
    expect(readsSession(again)).toBe(false);
  });

  it('refuses a token in every process once it is logged out in one', async () => {
    const { token } = await a.register();
    await a.read('/api/auth/me', token);
    await b.read('/api/auth/me', token);
    expect((await a.post('/api/auth/logout', undefined, { token })).status).toBe(200);
    expect((await a.get('/api/auth/me', { token })).status).toBe(401);
    await eventually(async () => (await b.get('/api/auth/me', { token })).status === 401, 'the other process refuses the token');
  });

  it('follows sessions and accounts changed in SQL', async () => {
    const expiring = await a.register();
    const renamed = await a.register({ name: 'Before' });
    for (const { token } of [expiring, renamed]) await b.read('/api/auth/me', token);
    await a.db('sessions').where({ user_id: expiring.user.id }).update({ expires_at: a.db.raw("now() - interval '1 second'") });
    await a.db('users').where({ id: renamed.user.id }).update({ name: 'After' });
    await eventually(async () => (await b.get('/api/auth/me', { token: expiring.token })).status === 401, 'an expired session is refused');
    await eventually(async () => (await b.read('/api/auth/me', renamed.token)).user.name === 'After', 'a renamed account shows its new name');
  });

  it('asks the database again after its listener lost the connection', async () => {
    const { token } = await b.register();
    await b.read('/api/auth/me', token);
    expect(readsSession(await statementsDuring(b, () => b.read('/api/auth/me', token)))).toBe(false);
    const listeners = "select pid from pg_stat_activity where application_name = 'dots-session-listener' and datname = current_database()";
    const before = (await b.db.raw<{ rows: Array<{ pid: number }> }>(listeners)).rows.map((row) => row.pid);
    expect(before).toHaveLength(2);
    await b.db.raw(`select pg_terminate_backend(pid) from (${listeners}) l`);
    // Both listeners come back on new connections; what was cached before is not trusted again.
    await eventually(async () => {
      const now = (await b.db.raw<{ rows: Array<{ pid: number }> }>(listeners)).rows.map((row) => row.pid);
      return now.length === 2 && now.every((pid) => !before.includes(pid));
    }, 'the listeners reconnect');
    expect(readsSession(await statementsDuring(b, () => b.read('/api/auth/me', token)))).toBe(true);
  });
});

import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ProcessCluster } from '../support/processes.js';
import { createTestDatabase } from '../support/service.js';

/** The access-log lines ("msg":"request") of a service's output, parsed. */
function accessLines(output: string): Array<Record<string, unknown>> {
  return output
    .split('\n')
    .filter((line) => line.includes('"msg":"request"'))
    .map((line) => JSON.parse(line) as Record<string, unknown>);
}

describe('the access log: trace id, client address, account', () => {
  let cluster: ProcessCluster;
  beforeAll(async () => {
    cluster = new ProcessCluster(await createTestDatabase(), {});
  });
  afterAll(() => cluster?.killAll());

  it("logs a traceparent's trace id, a new one otherwise, the client's address and the authenticated account", async () => {
    const { process: started, api } = await cluster.start();
    const { token, user } = await api.register();
    const traceId = '4bf92f3577b34da6a3ce929d0e0e4736';
    await api.get('/api/auth/me', { token, headers: { traceparent: `00-${traceId}-00f067aa0ba902b7-01`, 'x-request-id': 'traced-request' } });
    await api.get('/api/events', { headers: { 'x-request-id': 'untraced-request' } });
    // malformed: an all-zero trace id, upper-case hex
    await api.get('/livez', { headers: { traceparent: '00-00000000000000000000000000000000-00f067aa0ba902b7-01', 'x-request-id': 'zero-trace' } });
    await api.get('/livez', { headers: { traceparent: `00-${traceId.toUpperCase()}-00f067aa0ba902b7-01`, 'x-request-id': 'upper-trace' } });
    expect(await cluster.stop(started)).toEqual([0]);

    const lines = accessLines(started.output());
    const byId = (id: string) => lines.find((line) => line.requestId === id)!;
    expect(byId('traced-request')).toMatchObject({ traceId, client: '127.0.0.1', accountId: user.id, method: 'GET', path: '/api/auth/me', status: 200 });
    const untraced = byId('untraced-request');
    expect(untraced.traceId).toMatch(/^[0-9a-f]{32}$/);
    expect(untraced.traceId).not.toBe(traceId);
    expect(untraced.client).toBe('127.0.0.1');
    expect(untraced).not.toHaveProperty('accountId');
    for (const id of ['zero-trace', 'upper-trace']) {
      expect(byId(id).traceId).toMatch(/^[0-9a-f]{32}$/);
      expect(byId(id).traceId).not.toMatch(/^0+$|4bf92f3577b34da6a3ce929d0e0e4736/i);
    }
    // never a credential
    expect(started.output()).not.toContain(token);
  }, 60_000);
});

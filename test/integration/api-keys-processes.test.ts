import { generateKeyPairSync, randomBytes } from 'node:crypto';
import WebSocket from 'ws';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ProcessCluster } from '../support/processes.js';
import { kalshiHeaders, polyHeaders } from '../support/signing.js';
import { createTestDatabase } from '../support/service.js';

/**
 * API keys across two service processes on one database: a key created in one works in the other, and a
 * revocation in one is refused by the other within a second (the `key:<id>` notification of migration
 * 0021), including the WebSocket connection the other process opened with it. A signature used in one
 * process is a replay in the other.
 */

const ADDRESS = `0x${'c'.repeat(40)}`;

describe('API keys across processes', () => {
  let cluster: ProcessCluster;

  beforeAll(async () => {
    cluster = new ProcessCluster(await createTestDatabase(), { API_KEY_ENCRYPTION_KEY: randomBytes(32).toString('hex') });
  });
  afterAll(() => {
    cluster?.killAll();
  });

  it('refuses a revoked key in the other process within 1 s, and closes its WebSocket there', async () => {
    const [a, b] = [await cluster.start(), await cluster.start()];
    const { token } = await a.api.register();
    const { publicKey, privateKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
    const created = await a.api.post('/api/portfolio/api-keys', { name: 'bot', kind: 'rsa', scopes: ['read'], public_key: publicKey.export({ type: 'spki', format: 'pem' }) }, { token });
    expect(created.status).toBe(201);
    const keyId: string = created.body.api_key.id;
    const hmac = await a.api.post('/api/portfolio/api-keys', { name: 'clob', kind: 'hmac', scopes: ['read'], address: ADDRESS }, { token });
    expect(hmac.status).toBe(201);

    const balance = (api = b.api) => api.get('/api/portfolio/balance', { headers: kalshiHeaders(keyId, privateKey, 'GET', '/api/portfolio/balance') });
    // Known to (and cached by) the other process; order-book credentials are opened there with the same encryption key.
    expect((await balance()).status).toBe(200);
    expect((await balance()).status).toBe(200);
    expect((await b.api.get('/api/portfolio/balance', { headers: polyHeaders(hmac.body.credentials, ADDRESS, 'GET', '/api/portfolio/balance') })).status).toBe(200);

    // A signature used in one process is a replay in the other.
    const once = kalshiHeaders(keyId, privateKey, 'GET', '/api/portfolio/balance');
    expect((await a.api.get('/api/portfolio/balance', { headers: once })).status).toBe(200);
    expect((await b.api.get('/api/portfolio/balance', { headers: once })).status).toBe(401);

    const ws = new WebSocket(`${b.process.url.replace('http', 'ws')}/ws`, { headers: kalshiHeaders(keyId, privateKey, 'GET', '/ws') });
    await new Promise((resolve, reject) => {
      ws.once('open', resolve);
      ws.once('unexpected-response', (_, response) => reject(new Error(`upgrade refused: ${response.statusCode}`)));
    });
    const closed = new Promise<number>((resolve) => ws.once('close', () => resolve(Date.now())));
    ws.send(JSON.stringify({ id: 1, cmd: 'subscribe', params: { channels: ['user_orders'] } }));
    const reply = await new Promise<any>((resolve) => ws.once('message', (data: Buffer) => resolve(JSON.parse(data.toString()))));
    expect(reply.type).toBe('subscribed');

    const revokedAt = Date.now();
    expect((await a.api.delete(`/api/portfolio/api-keys/${keyId}`, { token })).status).toBe(200);
    let refusedAt: number | undefined;
    while (refusedAt === undefined && Date.now() - revokedAt < 5000) {
      const status = (await balance()).status;
      if (status === 401) refusedAt = Date.now();
      else expect(status).toBe(200);
    }
    expect(refusedAt).toBeDefined();
    expect(refusedAt! - revokedAt).toBeLessThan(1000);
    expect((await balance(a.api)).status).toBe(401);
    const closedAt = await Promise.race([closed, new Promise<number>((resolve) => setTimeout(() => resolve(Infinity), 5000))]);
    expect(closedAt - revokedAt).toBeLessThan(1000);
    // A revoked key cannot open a connection either.
    const refused = new WebSocket(`${b.process.url.replace('http', 'ws')}/ws`, { headers: kalshiHeaders(keyId, privateKey, 'GET', '/ws') });
    expect(await new Promise<number>((resolve) => refused.once('unexpected-response', (_, response) => resolve(response.statusCode ?? 0)))).toBe(401);
    refused.on('error', () => undefined);
    refused.terminate();
  });
});

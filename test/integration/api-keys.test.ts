import { generateKeyPairSync, randomBytes, type KeyObject } from 'node:crypto';
import WebSocket from 'ws';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { kalshiHeaders, polyHeaders, type OrderBookCredentials } from '../support/signing.js';
import { TestService } from '../support/service.js';

/**
 * API keys (src/domain/api-keys/): created, listed and revoked with the session token; requests signed
 * with an RSA key (KALSHI-ACCESS-*) or order-book credentials (POLY_*) in place of the token, limited to
 * the key's scopes, each signature accepted once and only near its timestamp.
 */

const ADMIN = { email: 'keys-admin@dots.local', password: 'keys-admin-password' };
const ENCRYPTION_KEY = randomBytes(32).toString('hex');
const ADDRESS = '0x00000000000000000000000000000000000000Aa';
const TICKER = 'KEYS-E-M1';

let api: TestService;
let token: string;
let rsa: { id: string; privateKey: KeyObject };

const rsaPair = () => generateKeyPairSync('rsa', { modulusLength: 2048 });

async function createKey(body: object, as = token): Promise<any> {
  const response = await api.post('/api/portfolio/api-keys', body, { token: as });
  expect(response.status, JSON.stringify(response.body)).toBe(201);
  return response.body;
}

async function rsaKey(scopes: string[]): Promise<{ id: string; privateKey: KeyObject }> {
  const { publicKey, privateKey } = rsaPair();
  const created = await createKey({ name: `bot ${scopes.join('+')}`, kind: 'rsa', scopes, public_key: publicKey.export({ type: 'spki', format: 'pem' }) });
  return { id: created.api_key.id, privateKey };
}

/** A request signed with `key` as a Kalshi client signs it. */
function signed(method: string, path: string, key = rsa, body?: unknown) {
  return api.request(method, path, { body, headers: kalshiHeaders(key.id, key.privateKey, method, path) });
}

beforeAll(async () => {
  api = await TestService.start({ ADMIN_EMAIL: ADMIN.email, ADMIN_PASSWORD: ADMIN.password, API_KEY_ENCRYPTION_KEY: ENCRYPTION_KEY });
  const admin = (await api.post('/api/auth/login', ADMIN)).body.token;
  const created = async (path: string, body: object) => expect((await api.post(path, body, { token: admin })).status).toBe(201);
  await created('/api/admin/series', { ticker: 'KEYS', title: 'API keys', category: 'economics', frequency: 'daily' });
  await created('/api/admin/events', { event_ticker: 'KEYS-E', series_ticker: 'KEYS', title: 'API keys', strike_date: '2031-01-01T00:00:00Z' });
  await created('/api/admin/markets', { ticker: TICKER, event_ticker: 'KEYS-E', title: 'Signed' });
  token = (await api.register()).token;
  rsa = await rsaKey(['read', 'trade']);
});

afterAll(async () => {
  await api?.stop();
});

describe('API keys', () => {
  it('lists the keys without their secrets, and allows at most 20 per account', async () => {
    const { token: owner } = await api.register();
    const generated = await createKey({ name: 'generated', kind: 'rsa', scopes: ['read'] }, owner);
    expect(generated.private_key).toMatch(/^-----BEGIN PRIVATE KEY-----/);
    const hmac = await createKey({ name: 'clob', kind: 'hmac', scopes: ['trade', 'read'], address: ADDRESS }, owner);
    expect(hmac.credentials).toEqual({ key: hmac.api_key.id, secret: expect.any(String), passphrase: expect.any(String) });
    expect(Buffer.from(hmac.credentials.secret, 'base64')).toHaveLength(32);
    expect(hmac.api_key).toMatchObject({ kind: 'hmac', scopes: ['read', 'trade'], address: ADDRESS.toLowerCase(), last_used_at: null });

    const listed = (await api.read('/api/portfolio/api-keys', owner)).api_keys;
    expect(listed.map((key: any) => key.id)).toEqual([generated.api_key.id, hmac.api_key.id]);
    expect(JSON.stringify(listed)).not.toContain(hmac.credentials.secret);
    expect(JSON.stringify(listed)).not.toContain(hmac.credentials.passphrase);
    // Nothing stored reveals the secret or the passphrase.
    const row = await api.db('api_keys').where({ id: hmac.api_key.id }).first();
    expect(JSON.stringify(row)).not.toContain(hmac.credentials.passphrase);
    expect(row.secret_sealed.includes(Buffer.from(hmac.credentials.secret, 'base64'))).toBe(false);

    // The generated private key signs.
    const generatedKey = { id: generated.api_key.id, privateKey: generated.private_key };
    expect((await api.request('GET', '/api/portfolio/balance', { headers: kalshiHeaders(generatedKey.id, generatedKey.privateKey, 'GET', '/api/portfolio/balance') })).status).toBe(200);

    const public_key = rsaPair().publicKey.export({ type: 'spki', format: 'pem' });
    for (let i = 2; i < 20; i += 1) await createKey({ name: `key ${i}`, kind: 'rsa', scopes: ['read'], public_key }, owner);
    const refused = await api.post('/api/portfolio/api-keys', { name: 'one too many', kind: 'rsa', scopes: ['read'] }, { token: owner });
    expect(refused.status).toBe(409);
    expect(refused.body.error.message).toMatch(/at most 20 API keys/);

    expect((await api.delete(`/api/portfolio/api-keys/${generated.api_key.id}`, { token: owner })).status).toBe(200);
    expect((await api.delete(`/api/portfolio/api-keys/${generated.api_key.id}`, { token: owner })).status).toBe(404);
    // Another account's key is not found either.
    expect((await api.delete(`/api/portfolio/api-keys/${hmac.api_key.id}`, { token })).status).toBe(404);
  });

  it('refuses keys that are not RSA keys of 2048 bits or more, and kinds given the other kind\'s fields', async () => {
    const small = generateKeyPairSync('rsa', { modulusLength: 1024 }).publicKey.export({ type: 'spki', format: 'pem' });
    const ec = generateKeyPairSync('ec', { namedCurve: 'P-256' }).publicKey.export({ type: 'spki', format: 'pem' });
    for (const public_key of [small, ec, 'not a key']) {
      const response = await api.post('/api/portfolio/api-keys', { name: 'bad', kind: 'rsa', scopes: ['read'], public_key }, { token });
      expect(response.status).toBe(400);
    }
    expect((await api.post('/api/portfolio/api-keys', { name: 'bad', kind: 'hmac', scopes: ['read'] }, { token })).status).toBe(400);
    expect((await api.post('/api/portfolio/api-keys', { name: 'bad', kind: 'rsa', scopes: ['read'], address: ADDRESS }, { token })).status).toBe(400);
    expect((await api.post('/api/portfolio/api-keys', { name: 'bad', kind: 'rsa', scopes: ['admin'] }, { token })).status).toBe(400);
  });

  it('places and cancels an order and reads the balance with requests signed as Kalshi clients sign them', async () => {
    const placed = await signed('POST', '/api/portfolio/orders', rsa, { ticker: TICKER, side: 'yes', count: '2', price: '0.40' });
    expect(placed.status, JSON.stringify(placed.body)).toBe(201);
    const orderId = placed.body.order.order_id;
    // The session token sees the order the key placed: the same account.
    expect((await api.read(`/api/portfolio/orders/${orderId}`, token)).status).toBe('OPEN');
    // The query string is not signed.
    const balance = await signed('GET', '/api/portfolio/balance?unsigned=1');
    expect(balance.status).toBe(200);
    expect(balance.body.reserved).toBe('0.80');
    expect((await signed('DELETE', `/api/portfolio/orders/${orderId}`)).status).toBe(200);
    expect((await signed('GET', '/api/portfolio/balance')).body.reserved).toBe('0.00');
    const listed = (await api.read('/api/portfolio/api-keys', token)).api_keys.find((key: any) => key.id === rsa.id);
    expect(listed.last_used_at).not.toBeNull();
  });

  it('refuses a key without the scope an operation needs (403)', async () => {
    const reader = await rsaKey(['read']);
    const refused = await signed('POST', '/api/portfolio/orders', reader, { ticker: TICKER, side: 'yes', count: '1', price: '0.40' });
    expect(refused.status).toBe(403);
    expect(refused.body.error.message).toMatch(/lacks the 'trade' scope/);
    expect((await signed('POST', '/api/portfolio/heartbeat', reader)).status).toBe(403);
    expect((await signed('GET', '/api/portfolio/balance', reader)).status).toBe(200);
    const trader = await rsaKey(['trade']);
    expect((await signed('GET', '/api/portfolio/orders', trader)).status).toBe(403);
  });

  it('refuses a replayed, stale, future, altered or unknown signature (401)', async () => {
    const headers = kalshiHeaders(rsa.id, rsa.privateKey, 'GET', '/api/portfolio/balance');
    expect((await api.get('/api/portfolio/balance', { headers })).status).toBe(200);
    const replayed = await api.get('/api/portfolio/balance', { headers });
    expect(replayed.status).toBe(401);
    expect(replayed.body.error.message).toMatch(/used before/);
    // Two replays at once: one of the pair, at most, is accepted.
    const fresh = kalshiHeaders(rsa.id, rsa.privateKey, 'GET', '/api/portfolio/balance');
    const pair = await Promise.all([api.get('/api/portfolio/balance', { headers: fresh }), api.get('/api/portfolio/balance', { headers: fresh })]);
    expect(pair.map((r) => r.status).sort()).toEqual([200, 401]);

    for (const offset of [-60_000, 60_000]) {
      const stale = await api.get('/api/portfolio/balance', { headers: kalshiHeaders(rsa.id, rsa.privateKey, 'GET', '/api/portfolio/balance', Date.now() + offset) });
      expect(stale.status).toBe(401);
      expect(stale.body.error.message).toMatch(/within 30 s/);
    }
    // Signed for another path, or by another key.
    expect((await api.get('/api/portfolio/positions', { headers: kalshiHeaders(rsa.id, rsa.privateKey, 'GET', '/api/portfolio/balance') })).status).toBe(401);
    expect((await api.get('/api/portfolio/balance', { headers: kalshiHeaders(rsa.id, rsaPair().privateKey, 'GET', '/api/portfolio/balance') })).status).toBe(401);
    for (const id of ['6be3c7c4-fb0e-4b94-8409-d37d7f719f01', 'not-a-uuid']) {
      const unknown = await api.get('/api/portfolio/balance', { headers: kalshiHeaders(id, rsa.privateKey, 'GET', '/api/portfolio/balance') });
      expect(unknown.status).toBe(401);
      expect(unknown.body.error.message).toMatch(/unknown or revoked/);
    }
    expect((await api.get('/api/portfolio/balance', { headers: { ...headers, 'KALSHI-ACCESS-SIGNATURE': '%%%' } })).status).toBe(401);
  });

  it('never lets a key reach account, API key or admin operations', async () => {
    for (const [method, path] of [
      ['GET', '/api/auth/me'],
      ['POST', '/api/auth/logout'],
      ['GET', '/api/portfolio/api-keys'],
      ['POST', '/api/portfolio/api-keys'],
      ['DELETE', `/api/portfolio/api-keys/${rsa.id}`],
      ['GET', '/api/admin/accounts'],
    ] as const) {
      const response = await api.request(method, path, { headers: kalshiHeaders(rsa.id, rsa.privateKey, method, path), ...(method === 'POST' && { body: { name: 'x', kind: 'rsa', scopes: ['read'] } }) });
      expect(response.status, `${method} ${path}`).toBe(401);
      expect(response.body.error.message).toMatch(/session token/);
    }
  });

  it('opens the WebSocket with a key of the read scope only, signed for GET /ws', async () => {
    const upgrade = (key: { id: string; privateKey: KeyObject }, path = '/ws') =>
      new Promise<number>((resolve) => {
        const ws = new WebSocket(`${api.baseUrl.replace('http', 'ws')}/ws`, { headers: kalshiHeaders(key.id, key.privateKey, 'GET', path) });
        ws.once('open', () => {
          ws.close();
          resolve(101);
        });
        ws.once('unexpected-response', (_, response) => {
          ws.on('error', () => undefined);
          ws.terminate();
          resolve(response.statusCode ?? 0);
        });
      });
    expect(await upgrade(rsa)).toBe(101);
    expect(await upgrade(rsa, '/api/portfolio/balance')).toBe(401);
    expect(await upgrade(await rsaKey(['trade']))).toBe(403);
  });

  it('accepts order-book credentials signed over the body, relative to the order-book base path', async () => {
    const { credentials } = await createKey({ name: 'clob', kind: 'hmac', scopes: ['read', 'trade'], address: ADDRESS });
    const creds = credentials as OrderBookCredentials;
    const body = JSON.stringify({ heartbeat_id: null });
    const heartbeat = await api.request('POST', '/api/clob/v1/heartbeats', { rawBody: body, headers: polyHeaders(creds, ADDRESS.toLowerCase(), 'POST', '/v1/heartbeats', body) });
    expect(heartbeat.status, JSON.stringify(heartbeat.body)).toBe(200);
    // The full path is signed by a client given the service's root.
    const balance = polyHeaders(creds, ADDRESS, 'GET', '/api/portfolio/balance');
    expect((await api.get('/api/portfolio/balance', { headers: balance })).status).toBe(200);
    expect((await api.get('/api/portfolio/balance', { headers: balance })).status).toBe(401);
    // A body other than the one signed, a wrong passphrase or address, a stale timestamp: 401.
    const signedFor = polyHeaders(creds, ADDRESS, 'POST', '/v1/heartbeats', body);
    expect((await api.request('POST', '/v1/heartbeats', { rawBody: JSON.stringify({ heartbeat_id: 'x' }), headers: signedFor })).status).toBe(401);
    expect((await api.get('/api/portfolio/balance', { headers: { ...polyHeaders(creds, ADDRESS, 'GET', '/api/portfolio/balance'), POLY_PASSPHRASE: 'wrong' } })).status).toBe(401);
    expect((await api.get('/api/portfolio/balance', { headers: polyHeaders(creds, `0x${'b'.repeat(40)}`, 'GET', '/api/portfolio/balance') })).status).toBe(401);
    const stale = await api.get('/api/portfolio/balance', { headers: polyHeaders(creds, ADDRESS, 'GET', '/api/portfolio/balance', '', Math.floor(Date.now() / 1000) - 60) });
    expect(stale.status).toBe(401);
    // Each kind signs with its own headers.
    expect((await api.get('/api/portfolio/balance', { headers: kalshiHeaders(creds.key, rsa.privateKey, 'GET', '/api/portfolio/balance') })).status).toBe(401);
  });
});

describe('per-key request budgets, on a service with DATABASE_URL and no API_KEY_ENCRYPTION_KEY', () => {
  let limited: TestService;
  beforeAll(async () => {
    limited = await TestService.start({ RATE_LIMITS: 'on', RATE_LIMIT_KEY_PRIVATE_READS: '2/60', RATE_LIMIT_PRIVATE_READS: '100/60' }, api.databaseUrl);
  });
  afterAll(async () => {
    await limited?.stop();
  });

  it('cannot issue order-book credentials (503), nor check those another instance issued (401)', async () => {
    const { token: owner } = await limited.register();
    const refused = await limited.post('/api/portfolio/api-keys', { name: 'clob', kind: 'hmac', scopes: ['read'], address: ADDRESS }, { token: owner });
    expect(refused.status).toBe(503);
    expect(refused.body.error.message).toMatch(/API_KEY_ENCRYPTION_KEY/);
    const { credentials } = await createKey({ name: 'elsewhere', kind: 'hmac', scopes: ['read'], address: ADDRESS });
    expect((await limited.get('/api/portfolio/balance', { headers: polyHeaders(credentials, ADDRESS, 'GET', '/api/portfolio/balance') })).status).toBe(401);
  });

  it('draws a signed request from its key\'s budget as well as its account\'s', async () => {
    const { token: owner } = await limited.register();
    const { publicKey, privateKey } = rsaPair();
    const created = (await limited.post('/api/portfolio/api-keys', { name: 'budgeted', kind: 'rsa', scopes: ['read'], public_key: publicKey.export({ type: 'spki', format: 'pem' }) }, { token: owner })).body;
    const get = () => limited.get('/api/portfolio/balance', { headers: kalshiHeaders(created.api_key.id, privateKey, 'GET', '/api/portfolio/balance') });
    const first = await get();
    expect(first.status).toBe(200);
    expect(first.headers.get('ratelimit-limit')).toBe('2');
    expect((await get()).status).toBe(200);
    const third = await get();
    expect(third.status).toBe(429);
    expect(third.headers.get('retry-after')).not.toBeNull();
    // The account's own budget is not spent.
    expect((await limited.get('/api/portfolio/balance', { token: owner })).status).toBe(200);
  });
});

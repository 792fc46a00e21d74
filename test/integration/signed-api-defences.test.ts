import { generateKeyPairSync, randomBytes, type KeyObject } from 'node:crypto';
import WebSocket from 'ws';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { requestFrom } from '../support/addresses.js';
import { MarketFactory } from '../support/markets.js';
import { FeedClient, wsUrl } from '../support/realtime.js';
import { kalshiHeaders, polyHeaders, type OrderBookCredentials } from '../support/signing.js';
import { TestService } from '../support/service.js';

/**
 * Defences of the signed API and of the budgets: one use per signature whatever its spelling (REST and the
 * WebSocket upgrade, both schemes), RSA keys of bounded verification cost, budgets taken before any
 * signature is verified or key pair generated, X-Forwarded-For believed from the proxies named only, IPv6
 * clients counted per /64, and batch placement with an API key. The work a request makes the service do
 * is read from its counters (signatures verified, key pairs generated), never from timings.
 */

const ADMIN = { email: 'defences-admin@dots.local', password: 'defences-password' };
const ADDRESS = '0x00000000000000000000000000000000000000Bb';
const ORDERS = '/api/portfolio/orders';

type Key = { id: string; privateKey: KeyObject };

const pem = (publicKey: KeyObject) => publicKey.export({ type: 'spki', format: 'pem' }) as string;

async function uploadKey(service: TestService, token: string, scopes: string[], publicExponent = 65537): Promise<Key> {
  const { publicKey, privateKey } = generateKeyPairSync('rsa', { modulusLength: 2048, publicExponent });
  const created = await service.post('/api/portfolio/api-keys', { name: 'bot', kind: 'rsa', scopes, public_key: pem(publicKey) }, { token });
  expect(created.status, JSON.stringify(created.body)).toBe(201);
  return { id: created.body.api_key.id, privateKey };
}

/** Other spellings of the same signature bytes: padding dropped or added, the URL-safe alphabet, unused low bits set. */
function respellings(signature: string): string[] {
  const alphabet = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/';
  const bare = signature.replace(/=+$/, '');
  const last = bare.length - 1;
  const lowBits = `${bare.slice(0, last)}${alphabet[alphabet.indexOf(bare[last]!) ^ 0b0011]}${signature.slice(bare.length)}`;
  const variants = [bare, `${signature}=`, signature.replaceAll('+', '-').replaceAll('/', '_'), lowBits];
  for (const variant of variants) expect(Buffer.from(variant.replaceAll('-', '+').replaceAll('_', '/'), 'base64')).toEqual(Buffer.from(signature, 'base64'));
  return variants;
}

/** A WebSocket upgrade's status (101 when opened) and, when refused, its headers and body. */
function upgrade(service: TestService, headers: Record<string, string>): Promise<{ status: number; headers?: Record<string, unknown>; body?: any }> {
  return new Promise((resolve) => {
    const ws = new WebSocket(wsUrl(service.baseUrl), { headers });
    ws.once('open', () => {
      ws.close();
      resolve({ status: 101 });
    });
    ws.once('unexpected-response', (_request, response) => {
      let text = '';
      response.on('data', (chunk: Buffer) => (text += chunk.toString()));
      response.on('end', () => {
        ws.on('error', () => undefined);
        ws.terminate();
        resolve({ status: response.statusCode ?? 0, headers: response.headers, body: JSON.parse(text) });
      });
    });
  });
}

let api: TestService;
let markets: MarketFactory;
let token: string;
let trader: Key;
const services: TestService[] = [];
const feeds: FeedClient[] = [];

/** A service of its own with the settings of one test (stopped after the file); on `databaseUrl`: another process of that service. */
async function serviceWith(env: Record<string, string>, databaseUrl?: string): Promise<TestService> {
  const service = await TestService.start({ ADMIN_EMAIL: ADMIN.email, ADMIN_PASSWORD: ADMIN.password, ...env }, databaseUrl);
  services.push(service);
  return service;
}

beforeAll(async () => {
  api = await TestService.start({ ADMIN_EMAIL: ADMIN.email, ADMIN_PASSWORD: ADMIN.password, API_KEY_ENCRYPTION_KEY: randomBytes(32).toString('hex') });
  markets = await MarketFactory.create(api, ADMIN, 'DEF');
  token = (await api.register()).token;
  trader = await uploadKey(api, token, ['read', 'trade']);
});
afterEach(() => {
  for (const feed of feeds) expect(feed.problems, 'messages that do not match the AsyncAPI document').toEqual([]);
});
afterAll(async () => {
  for (const feed of feeds) feed.close();
  await Promise.all(services.map((service) => service.stop()));
  await api?.stop();
});

const orderCount = async () => (await api.walk(ORDERS, 'orders', token)).items.length;

describe('one use per signature, whatever its spelling', () => {
  it('refuses an RSA signature respelled (padding, alphabet, low bits) with another body, over REST', async () => {
    const { ticker } = await markets.newMarket();
    const headers = kalshiHeaders(trader.id, trader.privateKey, 'POST', ORDERS);
    const before = await orderCount();
    const placed = await api.post(ORDERS, { ticker, side: 'yes', count: '1', price: '0.10' }, { headers });
    expect(placed.status, JSON.stringify(placed.body)).toBe(201);
    const replayed = await api.post(ORDERS, { ticker, side: 'yes', count: '1', price: '0.10' }, { headers });
    expect(replayed.status).toBe(401);
    expect(replayed.body.error.message).toMatch(/used before/);
    for (const [i, signature] of respellings(headers['KALSHI-ACCESS-SIGNATURE']!).entries()) {
      const respelled = await api.post(ORDERS, { ticker, side: 'no', count: String(i + 2), price: '0.20' }, { headers: { ...headers, 'KALSHI-ACCESS-SIGNATURE': signature } });
      expect(respelled.status, signature).toBe(401);
    }
    expect(await orderCount()).toBe(before + 1);
  });

  it('refuses a respelled signature even before the canonical one was used', async () => {
    const headers = kalshiHeaders(trader.id, trader.privateKey, 'GET', '/api/portfolio/balance');
    for (const signature of respellings(headers['KALSHI-ACCESS-SIGNATURE']!)) {
      const refused = await api.get('/api/portfolio/balance', { headers: { ...headers, 'KALSHI-ACCESS-SIGNATURE': signature } });
      expect(refused.status).toBe(401);
      expect(refused.body.error.message).toMatch(/standard base64 with its padding/);
    }
    expect((await api.get('/api/portfolio/balance', { headers })).status).toBe(200);
  });

  it('refuses a WebSocket upgrade signature respelled after its use', async () => {
    const headers = kalshiHeaders(trader.id, trader.privateKey, 'GET', '/ws');
    expect((await upgrade(api, headers)).status).toBe(101);
    for (const signature of respellings(headers['KALSHI-ACCESS-SIGNATURE']!)) {
      const refused = await upgrade(api, { ...headers, 'KALSHI-ACCESS-SIGNATURE': signature });
      expect(refused.status, signature).toBe(401);
      expect(refused.body).toEqual({ error: { code: 'unauthorized', message: expect.any(String) } });
    }
    expect((await upgrade(api, headers)).status).toBe(401);
  });

  it('refuses an order-book signature respelled, and counts one use across the paths it is valid at', async () => {
    const created = await api.post('/api/portfolio/api-keys', { name: 'clob', kind: 'hmac', scopes: ['read', 'trade'], address: ADDRESS }, { token });
    expect(created.status).toBe(201);
    const creds = created.body.credentials as OrderBookCredentials;
    const body = JSON.stringify({ heartbeat_id: null });
    const headers = polyHeaders(creds, ADDRESS, 'POST', '/v1/heartbeats', body);
    const signature = headers.POLY_SIGNATURE!;
    for (const respelled of [signature.replace(/=+$/, ''), signature.replaceAll('-', '+').replaceAll('_', '/')].filter((s) => s !== signature)) {
      expect((await api.request('POST', '/v1/heartbeats', { rawBody: body, headers: { ...headers, POLY_SIGNATURE: respelled } })).status).toBe(401);
    }
    expect((await api.request('POST', '/v1/heartbeats', { rawBody: body, headers })).status).toBe(200);
    // Signed for /v1/heartbeats, which a client given http://host/api/clob sends to /api/clob/v1/heartbeats.
    const again = await api.request('POST', '/api/clob/v1/heartbeats', { rawBody: body, headers });
    expect(again.status).toBe(401);
    expect(again.body.error.message).toMatch(/used before/);
  });
});

describe('RSA keys of bounded verification cost', () => {
  it('refuses at creation a public exponent other than 65537, with 400 naming public_key', async () => {
    for (const publicExponent of [3, 65539]) {
      const { publicKey } = generateKeyPairSync('rsa', { modulusLength: 2048, publicExponent });
      const refused = await api.post('/api/portfolio/api-keys', { name: 'odd', kind: 'rsa', scopes: ['read'], public_key: pem(publicKey) }, { token });
      expect(refused.status).toBe(400);
      expect(refused.body.error.message).toBe(`public_key must be an RSA key of 2048 to 4096 bits with public exponent 65537: this one is public exponent ${publicExponent}, not 65537`);
      expect(refused.body.error.details).toEqual([{ location: 'body', path: 'public_key', message: `public exponent ${publicExponent}, not 65537` }]);
    }
  });

  it('refuses a stored key of another exponent without verifying its signature', async () => {
    const { token: owner } = await api.register();
    const odd = await uploadKey(api, owner, ['read']);
    const { publicKey, privateKey } = generateKeyPairSync('rsa', { modulusLength: 2048, publicExponent: 3 });
    // As a key accepted before the exponent was bounded would be stored.
    await api.db('api_keys').where({ id: odd.id }).update({ public_key: pem(publicKey) });
    const verified = api.service.services.apiKeys.verifications;
    const refused = await api.get('/api/portfolio/balance', { headers: kalshiHeaders(odd.id, privateKey, 'GET', '/api/portfolio/balance') });
    expect(refused.status).toBe(401);
    expect(refused.body.error.message).toMatch(/public exponent 3, not 65537/);
    expect(api.service.services.apiKeys.verifications).toBe(verified);
  });
});

describe('budgets before the costly work', () => {
  it('refuses a signed request over its address budget without verifying its signature', async () => {
    // The key is created through another process, so that only the signed requests draw on these budgets.
    const limited = await serviceWith({ RATE_LIMITS: 'on', RATE_LIMIT_PRIVATE_READS: '3/60', RATE_LIMIT_KEY_PRIVATE_READS: '100/60' }, api.databaseUrl);
    const key = await uploadKey(api, (await api.register()).token, ['read']);
    const apiKeys = limited.service.services.apiKeys;
    const get = () => limited.get('/api/portfolio/balance', { headers: kalshiHeaders(key.id, key.privateKey, 'GET', '/api/portfolio/balance') });
    const verified = apiKeys.verifications;
    // The address has 3 private reads: the first 3 signed requests are verified and answered.
    for (let i = 0; i < 3; i += 1) expect((await get()).status).toBe(200);
    expect(apiKeys.verifications).toBe(verified + 3);
    for (let i = 0; i < 5; i += 1) {
      const refused = await get();
      expect(refused.status).toBe(429);
      expect(refused.headers.get('retry-after')).not.toBeNull();
    }
    expect(apiKeys.verifications).toBe(verified + 3);
  });

  it('refuses a WebSocket upgrade over its address budget before checking its signature', async () => {
    const limited = await serviceWith({ RATE_LIMITS: 'on', RATE_LIMIT_WS_UPGRADES: '1/60' });
    const { token: owner } = await limited.register();
    const key = await uploadKey(limited, owner, ['read']);
    const apiKeys = limited.service.services.apiKeys;
    expect((await upgrade(limited, kalshiHeaders(key.id, key.privateKey, 'GET', '/ws'))).status).toBe(101);
    const verified = apiKeys.verifications;
    const refused = await upgrade(limited, kalshiHeaders(key.id, key.privateKey, 'GET', '/ws'));
    expect(refused.status).toBe(429);
    expect(refused.headers?.['retry-after']).toMatch(/^\d+$/);
    expect(refused.headers?.['ratelimit-limit']).toBe('1');
    expect(refused.body).toEqual({ error: { code: 'rate_limited', message: expect.stringMatching(/too many WebSocket upgrades/) } });
    expect(apiKeys.verifications).toBe(verified);
    // Upgrades with a token or none draw on the same budget.
    expect((await upgrade(limited, {})).status).toBe(429);
  });

  it('answers feed commands over the address budget with error 107, without running them', async () => {
    const limited = await serviceWith({ RATE_LIMITS: 'on', RATE_LIMIT_WS_COMMANDS: '2/60' });
    const feed = await FeedClient.connect(limited.baseUrl);
    feeds.push(feed);
    expect((await feed.command('list_subscriptions'))[0].type).toBe('ok');
    expect((await feed.command('list_subscriptions'))[0].type).toBe('ok');
    feed.sendRaw(JSON.stringify({ id: 99, cmd: 'list_subscriptions' }));
    await feed.waitFor(() => feed.messages.some((m) => m.type === 'error'), 'the refusal');
    const refusal = feed.messages.find((m) => m.type === 'error');
    expect(refusal.msg.code).toBe(107);
    expect(refusal.msg.msg).toMatch(/too many commands/);
    expect(feed.messages.filter((m) => m.id === 99)).toEqual([]);
  });

  it('answers 409 to a 21st key without generating a key pair', async () => {
    const { token: owner } = await api.register();
    const { publicKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
    for (let i = 0; i < 19; i += 1) {
      expect((await api.post('/api/portfolio/api-keys', { name: `key ${i}`, kind: 'rsa', scopes: ['read'], public_key: pem(publicKey) }, { token: owner })).status).toBe(201);
    }
    const apiKeys = api.service.services.apiKeys;
    const before = apiKeys.generations;
    // The 20th is generated, and counted.
    expect((await api.post('/api/portfolio/api-keys', { name: 'generated', kind: 'rsa', scopes: ['read'] }, { token: owner })).status).toBe(201);
    const generated = before + 1;
    expect(apiKeys.generations).toBe(generated);
    for (let i = 0; i < 3; i += 1) {
      const refused = await api.post('/api/portfolio/api-keys', { name: 'one too many', kind: 'rsa', scopes: ['read'] }, { token: owner });
      expect(refused.status).toBe(409);
      expect(refused.body.error.message).toMatch(/at most 20 API keys/);
    }
    expect(apiKeys.generations).toBe(generated);
  });

  it('generates key pairs under a budget of their own per account (429 beyond), uploads aside', async () => {
    const limited = await serviceWith({ RATE_LIMITS: 'on', RATE_LIMIT_KEY_GENERATION: '1/600' });
    const { token: owner } = await limited.register();
    const apiKeys = limited.service.services.apiKeys;
    const generated = apiKeys.generations;
    expect((await limited.post('/api/portfolio/api-keys', { name: 'first', kind: 'rsa', scopes: ['read'] }, { token: owner })).status).toBe(201);
    const refused = await limited.post('/api/portfolio/api-keys', { name: 'second', kind: 'rsa', scopes: ['read'] }, { token: owner });
    expect(refused.status).toBe(429);
    expect(refused.body.error.message).toMatch(/too many generated API keys/);
    expect(Number(refused.headers.get('retry-after'))).toBeGreaterThan(500);
    expect(apiKeys.generations).toBe(generated + 1);
    await uploadKey(limited, owner, ['read']);
    // Another account has a budget of its own.
    expect((await limited.post('/api/portfolio/api-keys', { name: 'other', kind: 'rsa', scopes: ['read'] }, { token: (await limited.register()).token })).status).toBe(201);
  });
});

describe('client addresses', () => {
  it('ignores X-Forwarded-For from a peer that is not a trusted proxy, and believes it from one', async () => {
    const limited = await serviceWith({ RATE_LIMITS: 'on', RATE_LIMIT_PUBLIC_READS: '1/60', TRUST_PROXY: '127.0.0.1' });
    // 127.0.3.7 is not the proxy (all of 127.0.0.0/8 reaches the service on 127.0.0.1): its header is ignored, both requests are its own.
    expect((await requestFrom('127.0.3.7', limited.baseUrl, 'GET', '/healthz', undefined, { 'x-forwarded-for': '192.0.2.1' })).status).toBe(200);
    expect((await requestFrom('127.0.3.7', limited.baseUrl, 'GET', '/healthz', undefined, { 'x-forwarded-for': '192.0.2.2' })).status).toBe(429);
    // From the proxy, each forwarded address is a client of its own.
    expect((await requestFrom('127.0.0.1', limited.baseUrl, 'GET', '/healthz', undefined, { 'x-forwarded-for': '192.0.2.1' })).status).toBe(200);
    expect((await requestFrom('127.0.0.1', limited.baseUrl, 'GET', '/healthz', undefined, { 'x-forwarded-for': '192.0.2.2' })).status).toBe(200);
    expect((await requestFrom('127.0.0.1', limited.baseUrl, 'GET', '/healthz', undefined, { 'x-forwarded-for': '198.51.100.1, 192.0.2.2' })).status).toBe(429);
    // Another peer that is not the proxy is another client.
    expect((await requestFrom('127.0.4.4', limited.baseUrl, 'GET', '/healthz', undefined, { 'x-forwarded-for': '192.0.2.3' })).status).toBe(200);
  });

  it('counts two IPv6 addresses of one /64 as one client', async () => {
    const limited = await serviceWith({ RATE_LIMITS: 'on', RATE_LIMIT_PUBLIC_READS: '1/60', TRUST_PROXY: '127.0.0.1' });
    const from = (address: string) => limited.get('/healthz', { headers: { 'x-forwarded-for': address } });
    expect((await from('2001:db8:1:2::a')).status).toBe(200);
    expect((await from('2001:db8:1:2:ffff::b')).status).toBe(429);
    expect((await from('2001:db8:1:3::a')).status).toBe(200);
  });

  it('counts a client reaching a listener on ::1 by its /64', async () => {
    const limited = await serviceWith({ RATE_LIMITS: 'on', RATE_LIMIT_PUBLIC_READS: '1/60', HOST: '::1', TRUST_PROXY: '::1', CLIENT_IPV6_PREFIX_LENGTH: '48' });
    expect(limited.baseUrl).toMatch(/^http:\/\/\[::1\]:/);
    const from = (address: string) => limited.get('/healthz', { headers: { 'x-forwarded-for': address } });
    expect((await from('2001:db8:1:2::a')).status).toBe(200);
    expect((await from('2001:db8:1:3::a')).status).toBe(429);
    expect((await from('2001:db8:2::a')).status).toBe(200);
    // The proxy's own requests (no header) are its own client: ::1's network.
    expect((await limited.get('/healthz')).status).toBe(200);
    expect((await limited.get('/healthz')).status).toBe(429);
  });
});

describe('batch placement with an API key', () => {
  it('places a batch signed with a key of the trade scope, and refuses a read-only key (403)', async () => {
    const { ticker } = await markets.newMarket();
    const orders = [
      { ticker, side: 'yes', count: '1', price: '0.11' },
      { ticker, side: 'no', count: '2', price: '0.12' },
    ];
    const placed = await api.post('/api/portfolio/orders/batched', { orders }, { headers: kalshiHeaders(trader.id, trader.privateKey, 'POST', '/api/portfolio/orders/batched') });
    expect(placed.status, JSON.stringify(placed.body)).toBe(201);
    expect(placed.body.orders.map((item: any) => item.order?.status)).toEqual(['OPEN', 'OPEN']);
    const { token: owner } = await api.register();
    const reader = await uploadKey(api, owner, ['read']);
    const refused = await api.post('/api/portfolio/orders/batched', { orders }, { headers: kalshiHeaders(reader.id, reader.privateKey, 'POST', '/api/portfolio/orders/batched') });
    expect(refused.status).toBe(403);
    expect(refused.body.error.message).toMatch(/lacks the 'trade' scope/);
  });
});

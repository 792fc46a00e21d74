import { randomUUID } from 'node:crypto';
import { Chain, ClobClient, type ApiKeyCreds } from '@polymarket/clob-client';
import axios, { type InternalAxiosRequestConfig } from 'axios';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { checkAxiosAnswers, rewardedMarketWithBook } from '../support/clob.js';
import { TestService } from '../support/service.js';

/**
 * The published Polymarket CLOB client (`@polymarket/clob-client`), unchanged, against the service
 * (docs/compatibility.md): `postHeartbeat` (POST /v1/heartbeats with
 * `{heartbeat_id: string | null}`), `isOrderScoring` (GET /order-scoring?order_id=) and `areOrdersScoring`
 * (POST /orders-scoring with a bare JSON array).
 *
 * The client signs its requests with its own `POLY_*` headers (HMAC of dummy credentials here, with a stub
 * signer); with a Bearer token present the service authenticates with the token and reads no `POLY_*`
 * header (clob-client-api-keys.test.ts drives it with real credentials). It sends every request through
 * axios' default instance, so the Bearer token is added by a request interceptor on that instance, and a
 * response interceptor checks every answer against the OpenAPI document as the other integration tests do.
 */

const ADMIN = { email: 'clob-admin@dots.local', password: 'clob-admin-password' };
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

/** An ethers-style signer that signs nothing: only its address is read for the L2 headers. */
const stubSigner = {
  getAddress: () => Promise.resolve('0x00000000000000000000000000000000000000aa'),
  _signTypedData: () => Promise.resolve(`0x${'00'.repeat(65)}`),
};
const dummyCreds: ApiKeyCreds = { key: 'dummy-api-key', secret: Buffer.from('dummy-api-secret').toString('base64'), passphrase: 'dummy-passphrase' };

let api: TestService;
let token: string;
let client: ClobClient;
const sent: Array<{ method: string; path: string; headers: Record<string, unknown>; data: unknown }> = [];
const problems: string[] = [];
let requestInterceptor: number | undefined;
let stopChecking: (() => void) | undefined;
let scoringOrder: string;
let idleOrder: string;

beforeAll(async () => {
  api = await TestService.start({ ADMIN_EMAIL: ADMIN.email, ADMIN_PASSWORD: ADMIN.password, ORDER_HEARTBEAT_TIMEOUT_SECS: '3', ORDER_HEARTBEAT_SWEEP_INTERVAL_SECS: '1' });
  // Another account makes the book: a YES bid at 0.49 and a YES ask at 0.51 (midpoint 0.50).
  await rewardedMarketWithBook(api, ADMIN, 'CLOB');
  token = (await api.register()).token;
  stopChecking = checkAxiosAnswers(api, problems);

  requestInterceptor = axios.interceptors.request.use((config: InternalAxiosRequestConfig) => {
    if (String(config.url).startsWith(api.baseUrl)) {
      config.headers.set('Authorization', `Bearer ${token}`);
      sent.push({ method: String(config.method).toUpperCase(), path: new URL(String(config.url)).pathname, headers: { ...config.headers.toJSON() }, data: config.data });
    }
    return config;
  });
  client = new ClobClient(api.baseUrl, Chain.POLYGON, stubSigner, dummyCreds);
});

afterAll(async () => {
  if (requestInterceptor !== undefined) axios.interceptors.request.eject(requestInterceptor);
  stopChecking?.();
  await api.stop();
});

describe('@polymarket/clob-client against the service', () => {
  it('starts a heartbeat chain with postHeartbeat(null) and renews it with postHeartbeat(id)', async () => {
    const first = (await client.postHeartbeat(null)) as unknown as { status: string; heartbeat_id: string };
    expect(first).toEqual({ status: 'ok', heartbeat_id: expect.stringMatching(UUID) });
    const before = (await api.get('/api/portfolio/order-scoring/status', { token })).body.heartbeat;
    expect(before).toMatchObject({ heartbeat_id: first.heartbeat_id, active: true });

    const second = (await client.postHeartbeat(first.heartbeat_id)) as unknown as { status: string; heartbeat_id: string };
    expect(second).toEqual({ status: 'ok', heartbeat_id: first.heartbeat_id });
    const after = (await api.get('/api/portfolio/order-scoring/status', { token })).body.heartbeat;
    expect(Date.parse(after.last_seen_at)).toBeGreaterThan(Date.parse(before.last_seen_at));

    // What the client really sent: POST /v1/heartbeats, its JSON body, its own signature headers and our Bearer token.
    const calls = sent.filter((call) => call.path === '/v1/heartbeats');
    expect(calls.map((call) => [call.method, call.data])).toEqual([
      ['POST', JSON.stringify({ heartbeat_id: null })],
      ['POST', JSON.stringify({ heartbeat_id: first.heartbeat_id })],
    ]);
    expect(calls[0]!.headers).toMatchObject({ POLY_API_KEY: dummyCreds.key, POLY_PASSPHRASE: dummyCreds.passphrase, Authorization: `Bearer ${token}` });

    // An id the service never gave is refused (400), as the client reports errors: `{error, status}`.
    const refused = (await client.postHeartbeat(randomUUID())) as unknown as { error: { code: string }; status: number };
    expect(refused.status).toBe(400);
    expect(refused.error.code).toBe('invalid_request');
  });

  it('checks one order with isOrderScoring and several with areOrdersScoring', async () => {
    // A live session (the previous one may have expired meanwhile: timeout 3 s), then orders of the caller.
    const chain = (await client.postHeartbeat(null)) as unknown as { heartbeat_id: string };
    scoringOrder = (await api.post('/api/portfolio/orders', { ticker: 'CLOB-E-M1', side: 'yes', count: '10', price: '0.48' }, { token })).body.order.order_id;
    idleOrder = (await api.post('/api/portfolio/orders', { ticker: 'CLOB-E-M1', side: 'yes', count: '10', price: '0.20' }, { token })).body.order.order_id;
    expect(await client.isOrderScoring({ order_id: scoringOrder })).toEqual({ scoring: true });
    expect(await client.isOrderScoring({ order_id: idleOrder })).toEqual({ scoring: false });
    const unknown = randomUUID();
    expect(await client.areOrdersScoring({ orderIds: [scoringOrder, idleOrder, unknown] })).toEqual({ [scoringOrder]: true, [idleOrder]: false, [unknown]: false });
    expect(sent.filter((call) => call.path === '/order-scoring').every((call) => call.method === 'GET')).toBe(true);
    expect(sent.filter((call) => call.path === '/orders-scoring').map((call) => [call.method, call.data])).toEqual([['POST', JSON.stringify([scoringOrder, idleOrder, unknown])]]);
    await client.postHeartbeat(chain.heartbeat_id);
  });

  it('learns that its session expired (409) and its orders were cancelled, then starts a new chain', async () => {
    const chain = (await client.postHeartbeat(null)) as unknown as { heartbeat_id: string };
    // Timeout 3 s, sweep every second: swept within about 4 s.
    await new Promise((resolve) => setTimeout(resolve, 4_500));
    expect(await client.isOrderScoring({ order_id: scoringOrder })).toEqual({ scoring: false });
    const expired = (await client.postHeartbeat(chain.heartbeat_id)) as unknown as { error: { code: string }; status: number };
    expect(expired.status).toBe(409);
    expect(expired.error.code).toBe('conflict');
    expect((await api.get(`/api/portfolio/orders/${scoringOrder}`, { token })).body.status).toBe('CANCELLED');
    const next = (await client.postHeartbeat(null)) as unknown as { status: string; heartbeat_id: string };
    expect(next.status).toBe('ok');
    expect(next.heartbeat_id).not.toBe(chain.heartbeat_id);
  });

  it('got answers that all match the OpenAPI document', () => {
    expect(sent.length).toBeGreaterThanOrEqual(12);
    expect(problems).toEqual([]);
  });
});

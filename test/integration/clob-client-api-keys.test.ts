import { randomUUID } from 'node:crypto';
import { Chain, ClobClient, type ApiKeyCreds } from '@polymarket/clob-client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { checkAxiosAnswers, rewardedMarketWithBook } from '../support/clob.js';
import { TestService } from '../support/service.js';

/**
 * The published Polymarket CLOB client (`@polymarket/clob-client`), unchanged and with no request of its
 * own altered, authenticating with order-book credentials from `POST /api/portfolio/api-keys` through its
 * L2 headers (`POLY_*`, HMAC over timestamp + method + path + body). It is given the order-book base
 * `http://host:port/api/clob`, so it signs paths relative to it (`/v1/heartbeats`). A response interceptor
 * only reads the answers, to check them against the OpenAPI document.
 */

const ADMIN = { email: 'clob-keys-admin@dots.local', password: 'clob-keys-admin-password' };
const ADDRESS = '0x00000000000000000000000000000000000000bB';
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

/** An ethers-style signer: the L2 headers read only its address, which the credentials are bound to. */
const signer = {
  getAddress: () => Promise.resolve(ADDRESS),
  _signTypedData: () => Promise.resolve(`0x${'00'.repeat(65)}`),
};

let api: TestService;
let token: string;
let client: ClobClient;
const problems: string[] = [];
const seen: string[] = [];
let stopChecking: (() => void) | undefined;

beforeAll(async () => {
  api = await TestService.start({ ADMIN_EMAIL: ADMIN.email, ADMIN_PASSWORD: ADMIN.password, API_KEY_ENCRYPTION_KEY: 'cd'.repeat(32) });
  await rewardedMarketWithBook(api, ADMIN, 'CLOBK');
  token = (await api.register()).token;
  stopChecking = checkAxiosAnswers(api, problems, (method, path, status) => seen.push(`${method} ${path} ${status}`));
  const key = await api.post('/api/portfolio/api-keys', { name: 'clob bot', kind: 'hmac', scopes: ['read', 'trade'], address: ADDRESS }, { token });
  expect(key.status).toBe(201);
  client = new ClobClient(`${api.baseUrl}/api/clob`, Chain.POLYGON, signer, key.body.credentials as ApiKeyCreds);
});

afterAll(async () => {
  stopChecking?.();
  await api?.stop();
});

describe('@polymarket/clob-client with order-book credentials', () => {
  it('sends heartbeats', async () => {
    const first = (await client.postHeartbeat(null)) as unknown as { status: string; heartbeat_id: string };
    expect(first).toEqual({ status: 'ok', heartbeat_id: expect.stringMatching(UUID) });
    const second = (await client.postHeartbeat(first.heartbeat_id)) as unknown as { status: string; heartbeat_id: string };
    expect(second).toEqual({ status: 'ok', heartbeat_id: first.heartbeat_id });
    expect((await api.read('/api/portfolio/order-scoring/status', token)).heartbeat).toMatchObject({ heartbeat_id: first.heartbeat_id, active: true });
  });

  it('reads order scoring and cancels orders', async () => {
    const scoring = (await api.post('/api/portfolio/orders', { ticker: 'CLOBK-E-M1', side: 'yes', count: '10', price: '0.48' }, { token })).body.order.order_id;
    const idle = (await api.post('/api/portfolio/orders', { ticker: 'CLOBK-E-M1', side: 'yes', count: '10', price: '0.20' }, { token })).body.order.order_id;
    expect(await client.isOrderScoring({ order_id: scoring })).toEqual({ scoring: true });
    expect(await client.isOrderScoring({ order_id: idle })).toEqual({ scoring: false });
    const unknown = randomUUID();
    expect(await client.areOrdersScoring({ orderIds: [scoring, idle, unknown] })).toEqual({ [scoring]: true, [idle]: false, [unknown]: false });

    expect(await client.cancelOrder({ orderID: idle })).toEqual({ canceled: [idle], not_canceled: {} });
    expect((await api.read(`/api/portfolio/orders/${idle}`, token)).status).toBe('CANCELLED');
    expect(await client.cancelOrder({ orderID: unknown })).toEqual({ canceled: [], not_canceled: { [unknown]: 'not found' } });
    expect(await client.cancelOrder({ orderID: scoring })).toEqual({ canceled: [scoring], not_canceled: {} });
  });

  it('is refused once its key is revoked', async () => {
    const { api_keys } = await api.read('/api/portfolio/api-keys', token);
    expect(api_keys[0].last_used_at).not.toBeNull();
    expect((await api.delete(`/api/portfolio/api-keys/${api_keys[0].id}`, { token })).status).toBe(200);
    const refused = (await client.postHeartbeat(null)) as unknown as { status: number; error: { code: string } };
    expect(refused.status).toBe(401);
    expect(refused.error.code).toBe('unauthorized');
  });

  it('got answers that all match the OpenAPI document', () => {
    expect(seen.filter((line) => line.includes('/api/clob/')).length).toBeGreaterThanOrEqual(9);
    expect(problems).toEqual([]);
  });
});

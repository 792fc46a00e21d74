import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MarketFactory } from '../support/markets.js';
import { TestService } from '../support/service.js';

const ADMIN = { email: 'cache-admin@example.com', password: 'cache-admin-password' };

describe('conditional requests and Cache-Control', () => {
  let service: TestService;
  let markets: MarketFactory;
  beforeAll(async () => {
    service = await TestService.start({ ADMIN_EMAIL: ADMIN.email, ADMIN_PASSWORD: ADMIN.password, CATALOGUE_CACHE_MAX_AGE_SECS: '7' });
    markets = await MarketFactory.create(service, ADMIN, 'ETAG');
  });
  afterAll(async () => {
    await service?.stop();
  });

  it.each(['/events?limit=5', '/api/events?limit=5'])('%s: 304 while unchanged, 200 with a new ETag after a change', async (path) => {
    const first = await service.get(path);
    expect(first.status).toBe(200);
    const tag = first.headers.get('etag');
    expect(tag).toMatch(/^"[^"]+"$/);
    expect(first.headers.get('cache-control')).toBe('public, max-age=7');

    const unchanged = await service.get(path, { headers: { 'If-None-Match': tag! } });
    expect(unchanged.status).toBe(304);
    expect(unchanged.body).toBe('');
    expect(unchanged.headers.get('etag')).toBe(tag);
    expect(unchanged.headers.get('cache-control')).toBe('public, max-age=7');
    // a list of tags naming it, and a weak comparison, also match; another tag does not
    expect((await service.get(path, { headers: { 'If-None-Match': `"other", W/${tag}` } })).status).toBe(304);
    expect((await service.get(path, { headers: { 'If-None-Match': '"other"' } })).status).toBe(200);

    // a new event is at the head of both lists (newest first)
    const ticker = `ETAG${path.startsWith('/api') ? 'N' : 'C'}`;
    const login = await service.post('/api/auth/login', ADMIN);
    await service.post('/api/admin/series', { ticker, title: `${ticker} series`, category: 'economics', frequency: 'daily' }, { token: login.body.token });
    const created = await service.post('/api/admin/events', { event_ticker: `${ticker}-E`, series_ticker: ticker, title: `${ticker} event`, strike_date: '2031-01-01T00:00:00Z' }, { token: login.body.token });
    expect(created.status).toBe(201);

    const changed = await service.get(path, { headers: { 'If-None-Match': tag! } });
    expect(changed.status).toBe(200);
    expect(changed.headers.get('etag')).not.toBe(tag);
    expect(JSON.stringify(changed.body)).toContain(`${ticker}-E`);
    expect((await service.get(path, { headers: { 'If-None-Match': changed.headers.get('etag')! } })).status).toBe(304);
  });

  it('marks private answers private, no-store, and sends no ETag with them', async () => {
    const { token } = await service.register();
    const balance = await service.get('/api/portfolio/balance', { token });
    expect(balance.status).toBe(200);
    expect(balance.headers.get('cache-control')).toBe('private, no-store');
    expect(balance.headers.get('etag')).toBeNull();
    const refused = await service.get('/api/portfolio/balance');
    expect(refused.status).toBe(401);
    expect(refused.headers.get('cache-control')).toBe('private, no-store');
  });

  it('does not cache errors of catalogue reads', async () => {
    const missing = await service.get('/api/events/NO-SUCH-EVENT');
    expect(missing.status).toBe(404);
    expect(missing.headers.get('etag')).toBeNull();
    expect(missing.headers.get('cache-control')).toBeNull();
    expect(markets).toBeDefined();
  });
});

describe('CORS', () => {
  const APP = 'http://app.example.test:8080';
  const OTHER = 'http://elsewhere.example.test';
  let listed: TestService;
  let wildcard: TestService;
  let off: TestService;
  beforeAll(async () => {
    [listed, wildcard, off] = await Promise.all([
      TestService.start({ CORS_ORIGINS: APP }),
      TestService.start({ CORS_ORIGINS: `*,${APP}` }),
      TestService.start(),
    ]);
  });
  afterAll(async () => {
    await Promise.all([listed?.stop(), wildcard?.stop(), off?.stop()]);
  });

  const preflight = (base: string, path: string, origin: string, method: string, headers = '') =>
    fetch(`${base}${path}`, { method: 'OPTIONS', headers: { Origin: origin, 'Access-Control-Request-Method': method, ...(headers ? { 'Access-Control-Request-Headers': headers } : {}) } });

  it('answers a listed origin, on every operation, with the methods and headers of the path', async () => {
    const orders = await preflight(listed.baseUrl, '/api/portfolio/orders', APP, 'POST', 'authorization,content-type');
    expect(orders.status).toBe(204);
    expect(orders.headers.get('access-control-allow-origin')).toBe(APP);
    expect(orders.headers.get('access-control-allow-methods')!.split(', ').sort()).toEqual(['DELETE', 'GET', 'POST']);
    expect(orders.headers.get('access-control-allow-headers')!.split(', ')).toEqual(expect.arrayContaining(['authorization', 'content-type', 'x-request-id', 'traceparent']));
    expect(orders.headers.get('access-control-allow-credentials')).toBeNull();
    expect(orders.headers.get('vary')).toBe('Origin');
    // a templated path
    const order = await preflight(listed.baseUrl, '/api/portfolio/orders/3f0c1c3e-5a57-4b0c-9a3f-0f6f5d1e2a11', APP, 'DELETE');
    expect(order.status).toBe(204);
    expect(order.headers.get('access-control-allow-methods')!.split(', ').sort()).toEqual(['DELETE', 'GET']);

    const { token } = await listed.register();
    const me = await listed.get('/api/auth/me', { token, headers: { Origin: APP } });
    expect(me.status).toBe(200);
    expect(me.headers.get('access-control-allow-origin')).toBe(APP);
    expect(me.headers.get('access-control-expose-headers')).toContain('ETag');
  });

  it('refuses an origin not listed: no CORS header, and the preflight is 405', async () => {
    const refused = await preflight(listed.baseUrl, '/api/events', OTHER, 'GET');
    expect(refused.status).toBe(405);
    expect(refused.headers.get('access-control-allow-origin')).toBeNull();
    const read = await listed.get('/api/events', { headers: { Origin: OTHER } });
    expect(read.status).toBe(200);
    expect(read.headers.get('access-control-allow-origin')).toBeNull();
    // a method the path does not have
    expect((await preflight(listed.baseUrl, '/api/events', APP, 'DELETE')).status).toBe(405);
  });

  it('with *, lets any origin make public reads only, never with credentials', async () => {
    const events = await wildcard.get('/api/events', { headers: { Origin: OTHER } });
    expect(events.headers.get('access-control-allow-origin')).toBe('*');
    expect(events.headers.get('access-control-allow-credentials')).toBeNull();
    const pre = await preflight(wildcard.baseUrl, '/events', OTHER, 'GET', 'if-none-match');
    expect(pre.status).toBe(204);
    expect(pre.headers.get('access-control-allow-origin')).toBe('*');
    expect(pre.headers.get('access-control-allow-methods')).toBe('GET');
    // private operations: only the listed origin
    expect((await preflight(wildcard.baseUrl, '/api/portfolio/orders', OTHER, 'POST')).status).toBe(405);
    expect((await preflight(wildcard.baseUrl, '/api/auth/me', OTHER, 'GET')).status).toBe(405);
    // public, but not a read
    expect((await preflight(wildcard.baseUrl, '/api/auth/login', OTHER, 'POST')).status).toBe(405);
    const me = await preflight(wildcard.baseUrl, '/api/auth/me', APP, 'GET', 'authorization');
    expect(me.status).toBe(204);
    expect(me.headers.get('access-control-allow-origin')).toBe(APP);
  });

  it('sends no CORS header at all when CORS_ORIGINS is unset', async () => {
    const read = await off.get('/api/events', { headers: { Origin: APP } });
    expect(read.status).toBe(200);
    expect([...read.headers.keys()].filter((name) => name.startsWith('access-control-'))).toEqual([]);
    expect(read.headers.get('vary')).toBeNull();
    expect((await preflight(off.baseUrl, '/api/events', APP, 'GET')).status).toBe(405);
  });
});

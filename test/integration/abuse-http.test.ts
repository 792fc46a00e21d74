import { request as httpRequest } from 'node:http';
import { connect } from 'node:net';
import { brotliCompressSync, deflateSync, gzipSync } from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { TestService } from '../support/service.js';

/**
 * Abuse controls of the HTTP API: request budgets (429, RateLimit-* headers, nothing changed), the body
 * (415, corrupt encodings, 408), the header block (431), text the database cannot store (400 naming the
 * field), the role before the body (403), and HEAD on every GET route.
 */

const ADMIN = { email: 'operator@dots.local', password: 'operator-password' };
const BUDGETS = {
  RATE_LIMITS: 'on',
  RATE_LIMIT_PUBLIC_READS: '5/60',
  RATE_LIMIT_PRIVATE_READS: '4/60',
  RATE_LIMIT_ORDER_WRITES: '2/60',
  RATE_LIMIT_LOGIN: '1000/60',
  RATE_LIMIT_REGISTRATION: '1000/3600',
};

let api: TestService;
let admin: string;

beforeAll(async () => {
  api = await TestService.start({ ADMIN_EMAIL: ADMIN.email, ADMIN_PASSWORD: ADMIN.password, REQUEST_BODY_TIMEOUT_MS: '1000' });
  admin = (await api.post('/api/auth/login', ADMIN)).body.token;
});
afterAll(() => api.stop());

/** A service of its own with small budgets (every test gets fresh ones). */
async function limited(env: Record<string, string> = {}): Promise<TestService> {
  return TestService.start({ ADMIN_EMAIL: ADMIN.email, ADMIN_PASSWORD: ADMIN.password, ...BUDGETS, ...env });
}

function expectLimitHeaders(response: { headers: Headers }, limit: number, remaining: number): void {
  expect(response.headers.get('ratelimit-limit')).toBe(String(limit));
  expect(response.headers.get('ratelimit-remaining')).toBe(String(remaining));
  expect(Number(response.headers.get('ratelimit-reset'))).toBeGreaterThanOrEqual(1);
}

describe('request budgets', () => {
  it('counts public reads per address, with the headers on every answer, and refuses the one over budget with 429 and Retry-After', async () => {
    const service = await limited();
    try {
      for (let i = 0; i < 5; i++) {
        const response = await service.get(i % 2 === 0 ? '/api/events' : '/api/events/NO-SUCH-EVENT');
        expect([200, 404]).toContain(response.status);
        expectLimitHeaders(response, 5, 4 - i);
      }
      const refused = await service.get('/api/series');
      expect(refused.status).toBe(429);
      expect(refused.body.error.code).toBe('rate_limited');
      expect(refused.body.error.message).toContain('public-reads');
      expectLimitHeaders(refused, 5, 0);
      expect(Number(refused.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
      expect(Number(refused.headers.get('retry-after'))).toBeLessThanOrEqual(60);
      // an unknown route draws on the same budget, and says so
      const unknown = await fetch(`${service.baseUrl}/no/such/route`);
      expect(unknown.status).toBe(429);
    } finally {
      await service.stop();
    }
  });

  it('counts per account with a token, else per address; a refused order write changes nothing', async () => {
    const service = await limited();
    try {
      const one = await service.register();
      const two = await service.register();
      for (let i = 0; i < 4; i++) expect((await service.get('/api/portfolio/balance', { token: one.token })).status).toBe(200);
      expect((await service.get('/api/portfolio/balance', { token: one.token })).status).toBe(429);
      // another account from the same address has its own budget
      const other = await service.get('/api/portfolio/balance', { token: two.token });
      expect(other.status).toBe(200);
      expectLimitHeaders(other, 4, 3);

      // order writes: their own budget (2), the third placement refused before anything is done
      const market = await createMarket(service, 'RLIM');
      const order = { ticker: market, side: 'yes', action: 'buy', count: '1', price: '0.40' };
      for (let i = 0; i < 2; i++) expect((await service.post('/api/portfolio/orders', order, { token: two.token })).status).toBe(201);
      const before = await service.db('balances').where({ user_id: two.user.id }).first();
      const refused = await service.post('/api/portfolio/orders', order, { token: two.token });
      expect(refused.status).toBe(429);
      expect(await service.db('orders').where({ account_id: two.user.id }).count({ n: '*' })).toEqual([{ n: '2' }]);
      expect(await service.db('balances').where({ user_id: two.user.id }).first()).toEqual(before);
      // cancels draw on the same budget
      expect((await service.delete('/api/portfolio/orders', { token: two.token })).status).toBe(429);
    } finally {
      await service.stop();
    }
  });

  it('limits registration per address, creating nothing over budget', async () => {
    const service = await limited({ RATE_LIMIT_REGISTRATION: '2/3600' });
    try {
      await service.register();
      await service.register();
      const users = await service.db('users').count({ n: '*' });
      const refused = await service.post('/api/auth/register', { email: 'third@example.com', password: 'correct-horse-battery' });
      expect(refused.status).toBe(429);
      expect(Number(refused.headers.get('retry-after'))).toBeGreaterThan(3000);
      expect(await service.db('users').count({ n: '*' })).toEqual(users);
    } finally {
      await service.stop();
    }
  });

  it('takes the address from X-Forwarded-For only with TRUST_PROXY', async () => {
    const plain = await limited({ RATE_LIMIT_PUBLIC_READS: '1/60' });
    try {
      expect((await plain.get('/healthz', { headers: { 'x-forwarded-for': '192.0.2.1' } })).status).toBe(200);
      expect((await plain.get('/healthz', { headers: { 'x-forwarded-for': '192.0.2.2' } })).status).toBe(429);
    } finally {
      await plain.stop();
    }
    const proxied = await limited({ RATE_LIMIT_PUBLIC_READS: '1/60', TRUST_PROXY: '127.0.0.1' });
    try {
      expect((await proxied.get('/healthz', { headers: { 'x-forwarded-for': '192.0.2.1' } })).status).toBe(200);
      // the last entry is the one the trusted proxy added: a client-supplied first entry changes nothing
      expect((await proxied.get('/healthz', { headers: { 'x-forwarded-for': '10.9.9.9, 192.0.2.1' } })).status).toBe(429);
      expect((await proxied.get('/healthz', { headers: { 'x-forwarded-for': '192.0.2.2' } })).status).toBe(200);
    } finally {
      await proxied.stop();
    }
  });
});

describe('request bodies', () => {
  it('refuses a body that is not JSON with 415, and an unknown Content-Encoding with 415', async () => {
    const text = await api.request('POST', '/api/auth/login', { rawBody: '{"email":"a@b.c","password":"x"}', headers: { 'content-type': 'text/plain' } });
    expect(text.status).toBe(415);
    expect(text.body.error).toEqual({ code: 'unsupported_media_type', message: "request body must be application/json, got 'text/plain'" });
    const encoded = await api.request('POST', '/api/auth/login', { rawBody: '{}', headers: { 'content-encoding': 'compress' } });
    expect(encoded.status).toBe(415);
  });

  it('reads gzip, deflate and br bodies, and refuses corrupt or truncated ones with 400', async () => {
    const json = JSON.stringify({ email: 'nobody@example.com', password: 'wrong-password' });
    for (const [encoding, bytes] of [['gzip', gzipSync(json)], ['deflate', deflateSync(json)], ['br', brotliCompressSync(json)]] as const) {
      const good = await api.request('POST', '/api/auth/login', { rawBody: bytes, headers: { 'content-encoding': encoding } });
      expect(good.status, encoding).toBe(401);
      for (const bad of [Buffer.from('definitely not compressed'), bytes.subarray(0, Math.floor(bytes.length / 2))]) {
        const response = await api.request('POST', '/api/auth/login', { rawBody: bad, headers: { 'content-encoding': encoding } });
        expect(response.status, `${encoding} ${bad.length} bytes`).toBe(400);
        expect(response.body.error.code).toBe('invalid_request');
      }
    }
  });

  it('answers 408 with the envelope when the body does not arrive in time, and closes the connection', async () => {
    const url = new URL(api.baseUrl);
    const started = Date.now();
    const answer = await new Promise<string>((resolve, reject) => {
      const socket = connect(Number(url.port), url.hostname, () => {
        socket.write(`POST /api/auth/login HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n{"email":`);
      });
      let received = '';
      socket.on('data', (chunk) => (received += chunk.toString()));
      socket.on('close', () => resolve(received));
      socket.on('error', reject);
    });
    expect(Date.now() - started).toBeLessThan(5000);
    expect(answer).toMatch(/^HTTP\/1\.1 408 /);
    expect(answer).toMatch(/connection: close/i);
    expect(JSON.parse(answer.slice(answer.indexOf('\r\n\r\n') + 4))).toEqual({ error: { code: 'request_timeout', message: 'the request body did not arrive within 1000 ms' } });
  });

  it('answers a header block over 64 KiB with 431 and the envelope', async () => {
    const url = new URL(api.baseUrl);
    const { status, body } = await new Promise<{ status: number; body: string }>((resolve, reject) => {
      const req = httpRequest({ host: url.hostname, port: url.port, path: '/healthz', headers: { 'x-padding': 'x'.repeat(70 * 1024) } }, (res) => {
        let text = '';
        res.on('data', (chunk) => (text += chunk));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, body: text }));
      });
      req.on('error', reject);
      req.end();
    });
    expect(status).toBe(431);
    expect(JSON.parse(body)).toEqual({ error: { code: 'header_fields_too_large', message: 'the request line and headers exceed 64 KiB' } });
  });
});

describe('text the database cannot store', () => {
  it('refuses NUL and lone surrogates in body fields with 400 naming the field, changing nothing', async () => {
    const users = await api.db('users').count({ n: '*' });
    const cases: Array<[string, string, string, string]> = [
      ['/api/auth/login', '{"email":"a\\u0000@b.c","password":"x"}', "request body field '/email' contains a NUL character", '/email'],
      ['/api/auth/register', '{"email":"n@b.c","password":"correct-horse","name":"x\\u0000"}', "request body field '/name' contains a NUL character", '/name'],
      ['/api/auth/register', '{"email":"s@b.c","password":"correct-horse","name":"\\ud800"}', "request body field '/name' contains a lone surrogate (not valid Unicode text)", '/name'],
    ];
    for (const [path, rawBody, message, field] of cases) {
      const response = await api.request('POST', path, { rawBody });
      expect(response.status, rawBody).toBe(400);
      expect(response.body.error).toEqual({ code: 'invalid_request', message, details: [{ location: 'body', path: field, message: message.slice(message.indexOf("' ") + 2) }] });
    }
    expect(await api.db('users').count({ n: '*' })).toEqual(users);
    // a well-formed pair (an emoji) is text like any other
    expect((await api.request('POST', '/api/auth/login', { rawBody: '{"email":"\\ud83d\\ude00@b.c","password":"x"}' })).status).toBe(401);
  });

  it('refuses NUL in admin text fields, admin path parameters and query parameters', async () => {
    for (const [path, body] of [
      ['/api/admin/tags', { slug: 'nul-tag', label: 'a\u0000b' }],
      ['/api/admin/series', { ticker: 'NULS', title: 'x\u0000', category: 'economics', frequency: 'daily' }],
    ] as const) {
      const response = await api.post(path, body, { token: admin });
      expect(response.status, path).toBe(400);
      expect(response.body.error.message).toContain('contains a NUL character');
    }
    for (const action of ['close', 'resolve']) {
      const response = await api.post(`/api/admin/markets/%00/${action}`, action === 'resolve' ? { result: 'yes' } : undefined, { token: admin });
      expect(response.status, action).toBe(400);
      expect(response.body.error).toEqual({
        code: 'invalid_request',
        message: "path parameter 'ticker' contains a NUL character",
        details: [{ location: 'path', path: 'ticker', message: 'contains a NUL character' }],
      });
    }
    const query = await api.get('/api/markets?event_ticker=A%00B');
    expect(query.status).toBe(400);
    expect(query.body.error.message).toBe("query parameter 'event_ticker' contains a NUL character");
  });
});

describe('checks in order', () => {
  it('answers 403 to an account without the role before looking at the body', async () => {
    const { token } = await api.register();
    for (const rawBody of ['{"slug": 5}', '{"malformed', 'x'.repeat(600 * 1024)]) {
      const response = await api.request('POST', '/api/admin/tags', { token, rawBody });
      expect(response.status, rawBody.slice(0, 20)).toBe(403);
    }
    expect((await api.request('POST', '/api/admin/tags', { token, rawBody: 'a=b', headers: { 'content-type': 'text/plain' } })).status).toBe(403);
  });
});

describe('HEAD', () => {
  it('is answered for every GET route, with the status and headers of the GET and no body', async () => {
    const { token } = await api.register();
    const document = (await api.read('/openapi.json')) as { paths: Record<string, Record<string, any>> };
    const paths = Object.entries(document.paths).filter(([, item]) => item.get);
    expect(paths.length).toBeGreaterThan(40);
    for (const [template] of paths) {
      const path = template.replace(/\{[^}]+\}/g, 'NO-SUCH-THING');
      const get = await fetch(`${api.baseUrl}${path}`, { headers: { authorization: `Bearer ${token}` } });
      await get.arrayBuffer();
      const head = await fetch(`${api.baseUrl}${path}`, { method: 'HEAD', headers: { authorization: `Bearer ${token}` } });
      expect(head.status, `HEAD ${path}`).toBe(get.status);
      expect(head.headers.get('content-type'), `HEAD ${path}`).toBe(get.headers.get('content-type'));
      expect((await head.arrayBuffer()).byteLength, `HEAD ${path}`).toBe(0);
    }
  });
});

async function createMarket(service: TestService, prefix: string): Promise<string> {
  const token = (await service.post('/api/auth/login', ADMIN)).body.token;
  expect((await service.post('/api/admin/series', { ticker: prefix, title: 'Series', category: 'economics', frequency: 'daily' }, { token })).status).toBe(201);
  expect((await service.post('/api/admin/events', { event_ticker: `${prefix}-E`, series_ticker: prefix, title: 'Event', strike_date: '2031-01-01T00:00:00Z' }, { token })).status).toBe(201);
  const ticker = `${prefix}-E-M1`;
  expect((await service.post('/api/admin/markets', { ticker, event_ticker: `${prefix}-E`, title: 'Market' }, { token })).status).toBe(201);
  return ticker;
}

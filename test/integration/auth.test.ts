import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { TestService } from '../support/service.js';

const ADMIN = { email: 'operator@dots.local', password: 'operator-password' };

let api: TestService;

beforeAll(async () => {
  api = await TestService.start({ ADMIN_EMAIL: ADMIN.email, ADMIN_PASSWORD: ADMIN.password, STARTING_BALANCE: '250.5' });
});
afterAll(() => api.stop());

describe('register', () => {
  it('creates a USER account with a working token and grants the starting balance through the ledger', async () => {
    const response = await api.post('/api/auth/register', { email: 'Grace@Example.com', password: 'hopper-1906', name: 'Grace', username: 'grace' });
    expect(response.status).toBe(201);
    expect(response.body.user).toEqual({ id: expect.any(String), email: 'Grace@Example.com', name: 'Grace', username: 'grace', role: 'USER' });

    const me = await api.get('/api/auth/me', { token: response.body.token });
    expect(me.status).toBe(200);
    expect(me.body.user.id).toBe(response.body.user.id);

    const balance = await api.db('balances').where({ user_id: response.body.user.id }).first();
    expect(balance).toEqual({ user_id: response.body.user.id, cash: '250.50000000', reserved: '0.00000000' });
    const ledger = await api.db('ledger_entries').where({ user_id: response.body.user.id }).select('amount', 'kind');
    expect(ledger).toEqual([{ amount: '250.50000000', kind: 'grant' }]);
  });

  it('derives a free username from the email when none is given', async () => {
    const first = await api.register({ email: 'same.name@one.example' });
    const second = await api.register({ email: 'same.name@two.example' });
    expect(first.user).toMatchObject({ username: 'same_name' });
    expect(second.user).toMatchObject({ username: 'same_name_2' });
  });

  it('answers 409 for a taken email (any case) or username, and creates nothing', async () => {
    await api.register({ email: 'taken@example.com', username: 'taken_name' });
    const before = await api.db('users').count<{ count: string }[]>('* as count');
    const email = await api.post('/api/auth/register', { email: 'TAKEN@example.com', password: 'whatever-123' });
    expect(email.status).toBe(409);
    expect(email.body.error).toEqual({ code: 'conflict', message: 'email is already registered' });
    const username = await api.post('/api/auth/register', { email: 'other@example.com', password: 'whatever-123', username: 'Taken_Name' });
    expect(username.status).toBe(409);
    expect(username.body.error.message).toBe('username is taken');
    expect(await api.db('users').count<{ count: string }[]>('* as count')).toEqual(before);
  });

  it.each([
    ['a missing password', { email: 'x@example.com' }, "request body field 'password' is required"],
    ['a missing email', { password: 'long-enough' }, "request body field 'email' is required"],
    ['a short password', { email: 'x@example.com', password: 'short' }, "request body field 'password' must NOT have fewer than 8 characters"],
    ['an email of the wrong type', { email: 42, password: 'long-enough' }, "request body field 'email' must be string"],
    ['a malformed email', { email: 'not-an-email', password: 'long-enough' }, 'request body field \'email\' must match format "email"'],
    ['an unknown field', { email: 'x@example.com', password: 'long-enough', role: 'ADMIN' }, "request body must NOT have additional properties: 'role'"],
    ['a bad username', { email: 'x@example.com', password: 'long-enough', username: 'no spaces' }, "request body field 'username' must match pattern \"^[A-Za-z0-9_]+$\""],
    ['a body that is not an object', ['x@example.com'], 'request body must be object'],
  ])('refuses %s with a 400 naming the field', async (_, body, message) => {
    const response = await api.post('/api/auth/register', body);
    expect(response.status).toBe(400);
    expect(response.body.error.code).toBe('invalid_request');
    expect(response.body.error.message).toBe(message);
    expect(response.body.error.details[0].location).toBe('body');
  });

  it('refuses a missing body, malformed JSON and a 1 MB body', async () => {
    const missing = await api.request('POST', '/api/auth/register');
    expect(missing.status).toBe(400);
    expect(missing.body.error.message).toBe("request body field 'email' is required");

    const malformed = await api.request('POST', '/api/auth/register', { rawBody: '{"email": "a@b.c", "password": ' });
    expect(malformed.status).toBe(400);
    expect(malformed.body.error).toEqual({ code: 'invalid_json', message: 'request body is not valid JSON' });

    const huge = await api.request('POST', '/api/auth/register', { body: { email: 'big@example.com', password: 'x'.repeat(1024 * 1024) } });
    expect(huge.status).toBe(413);
    expect(huge.body.error.code).toBe('payload_too_large');
    expect(await api.db('users').whereRaw("email = 'big@example.com'")).toEqual([]);
  });
});

describe('login', () => {
  it('signs in with the right password (email in any case)', async () => {
    const { user } = await api.register({ email: 'ada@example.com', password: 'analytical-engine' });
    const response = await api.post('/api/auth/login', { email: 'ADA@example.com', password: 'analytical-engine' });
    expect(response.status).toBe(200);
    expect(response.body.user).toEqual(user);
    expect((await api.get('/api/auth/me', { token: response.body.token })).status).toBe(200);
  });

  it('gives an unknown email and a wrong password the same 401', async () => {
    await api.register({ email: 'known@example.com', password: 'right-password' });
    const wrong = await api.post('/api/auth/login', { email: 'known@example.com', password: 'wrong-password' });
    const unknown = await api.post('/api/auth/login', { email: 'nobody@example.com', password: 'right-password' });
    expect(wrong.status).toBe(401);
    expect(unknown.status).toBe(401);
    expect(wrong.body).toEqual(unknown.body);
    expect(wrong.body.error).toEqual({ code: 'unauthorized', message: 'email or password is incorrect' });
  });

  it('refuses bad input with a 400, and a body that is not JSON with a 415', async () => {
    expect((await api.post('/api/auth/login', { email: 'a@b.c' })).status).toBe(400);
    expect((await api.post('/api/auth/login', { email: ['a@b.c'], password: 'x' })).status).toBe(400);
    const form = await api.request('POST', '/api/auth/login', { rawBody: 'email=a&password=b', headers: { 'content-type': 'application/x-www-form-urlencoded' } });
    expect(form.status).toBe(415);
    expect(form.body.error.code).toBe('unsupported_media_type');
  });
});

describe('tokens', () => {
  it('refuses a missing, malformed or unknown token with 401', async () => {
    for (const headers of <Record<string, string>[]>[{}, { authorization: 'Bearer' }, { authorization: 'Basic abc' }, { authorization: 'Bearer dots_unknown' }, { authorization: `Bearer ${'x'.repeat(600)}` }]) {
      const response = await api.get('/api/auth/me', { headers });
      expect(response.status).toBe(401);
      expect(response.body.error.code).toBe('unauthorized');
    }
  });

  it('stops accepting a token after logout, and only that token', async () => {
    const { token } = await api.register({ email: 'leaving@example.com', password: 'goodbye-123' });
    const other = await api.post('/api/auth/login', { email: 'leaving@example.com', password: 'goodbye-123' });
    const logout = await api.post('/api/auth/logout', undefined, { token });
    expect(logout.status).toBe(200);
    expect(logout.body).toEqual({ status: 'logged_out' });
    expect((await api.get('/api/auth/me', { token })).status).toBe(401);
    expect((await api.post('/api/auth/logout', undefined, { token })).status).toBe(401);
    expect((await api.get('/api/auth/me', { token: other.body.token })).status).toBe(200);
  });

  it('refuses an expired token', async () => {
    const { token, user } = await api.register();
    await api.db('sessions').where({ user_id: user.id }).update({ expires_at: api.db.raw("now() - interval '1 second'") });
    expect((await api.get('/api/auth/me', { token })).status).toBe(401);
  });

  it('stores only a hash of the token and the password', async () => {
    const { token, user } = await api.register({ password: 'very-secret-password' });
    const session = await api.db('sessions').where({ user_id: user.id }).first();
    const row = await api.db('users').where({ id: user.id }).first();
    expect(JSON.stringify(session)).not.toContain(token);
    expect(row.password_hash).toMatch(/^scrypt\$/);
    expect(row.password_hash).not.toContain('very-secret-password');
  });

  it('ignores order-book client signature headers', async () => {
    const { token } = await api.register();
    const response = await api.get('/api/auth/me', { token, headers: { POLY_ADDRESS: '0xabc', POLY_SIGNATURE: 'sig', POLY_TIMESTAMP: '1', POLY_API_KEY: 'k', POLY_PASSPHRASE: 'p' } });
    expect(response.status).toBe(200);
  });
});

describe('admin', () => {
  const login = async () => (await api.post('/api/auth/login', ADMIN)).body.token as string;

  it('ensures the ADMIN_EMAIL account exists with role ADMIN', async () => {
    const response = await api.post('/api/auth/login', ADMIN);
    expect(response.status).toBe(200);
    expect(response.body.user.role).toBe('ADMIN');
  });

  it('answers 401 without a token and 403 to a USER token', async () => {
    const { token } = await api.register();
    expect((await api.get('/api/admin/accounts')).status).toBe(401);
    const forbidden = await api.get('/api/admin/accounts', { token });
    expect(forbidden.status).toBe(403);
    expect(forbidden.body.error).toEqual({ code: 'forbidden', message: 'requires role ADMIN' });
  });

  it('walks every account exactly once with cursors, newest first', async () => {
    const token = await login();
    for (let i = 0; i < 5; i += 1) await api.register();
    const all = (await api.get('/api/admin/accounts?limit=100', { token })).body.accounts.map((a: { id: string }) => a.id);
    const seen: string[] = [];
    let cursor: string | null = '';
    do {
      const page: { status: number; body: { cursor: string | null; accounts: Array<{ id: string }> } } = await api.get(
        `/api/admin/accounts?limit=2${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`,
        { token },
      );
      expect(page.status).toBe(200);
      expect(page.body.accounts.length).toBeLessThanOrEqual(2);
      seen.push(...page.body.accounts.map((a) => a.id));
      cursor = page.body.cursor;
    } while (cursor);
    expect(seen).toEqual(all);
    expect(new Set(seen).size).toBe(seen.length);
  });

  it('filters by role and clamps the page size to 100', async () => {
    const token = await login();
    const admins = await api.get('/api/admin/accounts?role=ADMIN', { token });
    expect(admins.body.accounts.map((a: { role: string }) => a.role)).toEqual(['ADMIN']);

    await api.db('users').insert(
      Array.from({ length: 105 }, (_, i) => ({ email: `bulk${i}@example.com`, username: `bulk${i}`, password_hash: 'x' })),
    );
    await api.db.raw("insert into balances (user_id, cash) select id, 0 from users where email like 'bulk%'");
    const clamped = await api.get('/api/admin/accounts?limit=100000', { token });
    expect(clamped.status).toBe(200);
    expect(clamped.body.accounts).toHaveLength(100);
    expect(clamped.body.cursor).toEqual(expect.any(String));
  });

  it.each([
    ['limit=0', "query parameter 'limit' must be >= 1"],
    ['limit=abc', "query parameter 'limit' must be integer"],
    ['limit=1.5', "query parameter 'limit' must be integer"],
    ['role=ROOT', "query parameter 'role' must be equal to one of the allowed values: USER, ADMIN"],
    ['cursor=not-a-cursor', 'cursor is not a cursor of this collection; pass back the cursor of the previous page verbatim'],
    [`cursor=${Buffer.from('{"v":1,"c":"orders","k":["x","y"]}').toString('base64url')}`, 'cursor is not a cursor of this collection; pass back the cursor of the previous page verbatim'],
    [`cursor=${Buffer.from('{"v":1,"c":"accounts","k":["2026-01-01",1]}').toString('base64url')}`, 'cursor is not a cursor of this collection; pass back the cursor of the previous page verbatim'],
  ])('refuses %s with a 400', async (query, message) => {
    const token = await login();
    const response = await api.get(`/api/admin/accounts?${query}`, { token });
    expect(response.status).toBe(400);
    expect(response.body.error.message).toBe(message);
  });

  it('ignores unknown query parameters', async () => {
    const token = await login();
    expect((await api.get('/api/admin/accounts?limit=1&unknown=1&another[x]=2', { token })).status).toBe(200);
  });
});

describe('routing', () => {
  it('answers unknown routes 404 and known paths with another method 405, in the envelope', async () => {
    const unknown = await api.get('/api/nothing-here');
    expect(unknown.status).toBe(404);
    expect(unknown.body.error.code).toBe('not_found');
    const method = await api.request('PUT', '/api/auth/login', { body: {} });
    expect(method.status).toBe(405);
    expect(method.body.error.code).toBe('method_not_allowed');
  });

  it('answers JSON as exactly application/json, with a request id', async () => {
    const response = await api.get('/healthz');
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toBe('application/json');
    expect(response.headers.get('x-request-id')).toMatch(/^[0-9a-f-]{36}$/);
    expect((await api.get('/healthz', { headers: { 'x-request-id': 'trace-123' } })).headers.get('x-request-id')).toBe('trace-123');
  });

  it('serves the bundled document and the docs page', async () => {
    const document = await api.get('/openapi.json');
    expect(document.body.openapi).toBe('3.0.3');
    expect(Object.keys(document.body.paths)).toContain('/api/auth/login');
    const docs = await api.get('/docs');
    expect(docs.body).toContain('swagger-ui');
    const asset = await fetch(`${api.service.url}/docs/assets/swagger-ui-bundle.js`);
    expect(asset.status).toBe(200);
  });
});

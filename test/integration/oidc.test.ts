import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { generateKeyPair, SignJWT, importJWK, type JWTPayload } from 'jose';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FeedClient } from '../support/realtime.js';
import { TestService } from '../support/service.js';
import { CLIENT_ID, TestProvider } from '../support/oidc-provider.js';

const EXCHANGE = '/api/auth/oidc/exchange';
const COOLDOWN_SECS = 1;

let provider: TestProvider;
let api: TestService;
let subjects = 0;

/** A user of the provider no test used before. */
function newUser(claims: Partial<{ email: string; email_verified: boolean; name: string; preferred_username: string }> = {}): string {
  subjects += 1;
  const sub = `sub-${subjects}-${Date.now()}`;
  provider.users.set(sub, { email: `${sub}@idp.example`, email_verified: true, name: `User ${subjects}`, ...claims });
  return sub;
}

async function counts(service: TestService = api): Promise<{ users: number; identities: number; ledger: number }> {
  const one = async (table: string) => Number((await service.db(table).count<{ count: string }[]>('* as count'))[0]!.count);
  return { users: await one('users'), identities: await one('identities'), ledger: await one('ledger_entries') };
}

/** A token signed with the provider's current key (or `key`), carrying the claims of a valid ID token unless overridden. */
async function craft(claims: JWTPayload, options: { key?: CryptoKey; kid?: string; alg?: string; typ?: string } = {}): Promise<string> {
  const current = provider.keys[0]!;
  const key = options.key ?? ((await importJWK(current.jwk, 'RS256')) as CryptoKey);
  const now = Math.floor(Date.now() / 1000);
  const payload = { iss: provider.issuer, aud: CLIENT_ID, sub: newUser(), email_verified: true, iat: now, exp: now + 300, ...claims };
  return new SignJWT(payload).setProtectedHeader({ alg: options.alg ?? 'RS256', kid: options.kid ?? current.kid, ...(options.typ && { typ: options.typ }) }).sign(key);
}

beforeAll(async () => {
  provider = await TestProvider.start();
  api = await TestService.start({
    STARTING_BALANCE: '75',
    OIDC_ISSUER: provider.issuer,
    OIDC_CLIENT_ID: CLIENT_ID,
    OIDC_TIMEOUT_SECS: '2',
    OIDC_JWKS_COOLDOWN_SECS: String(COOLDOWN_SECS),
  });
});
afterAll(async () => {
  await api?.stop();
  await provider?.stop();
});

describe('a code flow at the provider', () => {
  it('yields an ID token that the exchange turns into a working bearer token, on a new USER account with the starting balance', async () => {
    const sub = newUser({ email: 'Ada.Lovelace@idp.example', name: 'Ada Lovelace', preferred_username: 'ada lovelace' });
    const { idToken, nonce } = await provider.idToken(sub);
    const response = await api.post(EXCHANGE, { id_token: idToken, nonce });
    expect(response.status).toBe(200);
    expect(response.body.user).toEqual({ id: expect.any(String), email: 'Ada.Lovelace@idp.example', name: 'Ada Lovelace', username: 'ada_lovelace', role: 'USER' });

    const token = response.body.token;
    expect((await api.get('/api/auth/me', { token })).body.user.id).toBe(response.body.user.id);
    expect((await api.get('/api/portfolio/balance', { token })).status).toBe(200);
    expect(await api.db('ledger_entries').where({ user_id: response.body.user.id }).select('amount', 'kind')).toEqual([{ amount: '75.00000000', kind: 'grant' }]);
    expect(await api.db('identities').where({ user_id: response.body.user.id }).select('issuer', 'subject')).toEqual([{ issuer: provider.issuer, subject: sub }]);

    const feed = await FeedClient.connect(api.baseUrl, token);
    try {
      expect(await feed.subscribe(['fill', 'user_orders'])).toHaveLength(2);
      expect(feed.problems).toEqual([]);
    } finally {
      feed.close();
    }
  });

  it('redeems the code itself in the code-flow variant', async () => {
    const sub = newUser();
    const proof = await provider.authorize(sub);
    const response = await api.post(EXCHANGE, proof);
    expect(response.status).toBe(200);
    expect(response.body.user.email).toBe(`${sub}@idp.example`);
    expect((await api.get('/api/auth/me', { token: response.body.token })).status).toBe(200);

    // A code is redeemed once: the provider refuses it again, and the answer is 401.
    const again = await api.post(EXCHANGE, proof);
    expect(again.status).toBe(401);
    expect(again.body.error.code).toBe('unauthorized');
    expect(again.body.error.message).toMatch(/refused the code: invalid_grant/);
  });

  it('gives the same account for the same sub, even after the email changed at the provider', async () => {
    const sub = newUser();
    const first = await api.post(EXCHANGE, { id_token: (await provider.idToken(sub)).idToken });
    provider.users.set(sub, { ...provider.users.get(sub), email: `renamed-${sub}@idp.example` });
    const before = await counts();
    const second = await api.post(EXCHANGE, { id_token: (await provider.idToken(sub)).idToken });
    expect(second.status).toBe(200);
    expect(second.body.user).toEqual(first.body.user);
    expect(second.body.token).not.toBe(first.body.token);
    expect(await counts()).toEqual(before);
    expect(await api.db('identities').where({ subject: sub }).first('email')).toEqual({ email: `renamed-${sub}@idp.example` });
  });

  it('creates one account when first sign-ins of one sub race', async () => {
    const before = await counts();
    const sub = newUser();
    // six ID tokens of one sub (a token without a nonce is accepted once)
    const idTokens = await Promise.all(Array.from({ length: 6 }, (_, i) => craft({ sub, email: 'racer@idp.example', jti: `race-${i}` })));
    const responses = await Promise.all(idTokens.map((idToken) => api.post(EXCHANGE, { id_token: idToken })));
    expect(responses.map((r) => r.status)).toEqual(Array(6).fill(200));
    expect(new Set(responses.map((r) => r.body.user.id)).size).toBe(1);
    expect(await counts()).toEqual({ users: before.users + 1, identities: before.identities + 1, ledger: before.ledger + 1 });
  });

  it('creates an account that has no password: password sign-in answers the usual 401', async () => {
    const response = await api.post(EXCHANGE, { id_token: await craft({ email: 'no-password@idp.example' }) });
    expect(response.status).toBe(200);
    expect((await api.db('users').where({ id: response.body.user.id }).first('password_hash')).password_hash).toBeNull();
    for (const password of ['', 'correct-horse-battery', 'null']) {
      const login = await api.post('/api/auth/login', { email: 'no-password@idp.example', password });
      expect(login.status).toBe(401);
      expect(login.body.error).toEqual({ code: 'unauthorized', message: 'email or password is incorrect' });
    }
  });

  it('derives a free username when the one wanted is taken', async () => {
    await api.register({ email: 'someone@else.example', username: 'grace' });
    const response = await api.post(EXCHANGE, { id_token: await craft({ email: 'grace@idp.example', preferred_username: 'Grace' }) });
    expect(response.status).toBe(200);
    expect(response.body.user.username).toBe('Grace_2');
  });
});

describe('linking an existing account', () => {
  /** An account registered with a password, its session token and an API key. */
  async function registeredWithKey(email: string) {
    const registered = await api.register({ email, password: 'the-registrants-password' });
    const key = await api.post('/api/portfolio/api-keys', { name: 'bot', kind: 'rsa', scopes: ['read'] }, { token: registered.token });
    expect(key.status).toBe(201);
    return registered;
  }
  const keysOf = async (userId: string) => Number((await api.db('api_keys').where({ user_id: userId }).count<{ count: string }[]>('* as count'))[0]!.count);

  it('refuses to link on the email alone (a pre-registered account): the registrant keeps no way into the identity, the owner gets 409', async () => {
    // someone registers the victim's email with a password of their own, and makes a key
    const attacker = await registeredWithKey('Victim.Person@example.com');
    const sub = newUser({ email: 'victim.person@EXAMPLE.com' });
    const before = await counts();
    const response = await api.post(EXCHANGE, { id_token: (await provider.idToken(sub)).idToken });
    expect(response.status).toBe(409);
    expect(response.body.error.code).toBe('conflict');
    expect(response.body.error.message).toMatch(/send its password as link_password/);
    expect(await counts()).toEqual(before);
    expect(await api.db('identities').where({ user_id: attacker.user.id }).first()).toBeUndefined();
    // a later sign-in of the same sub is refused the same way: nothing of the victim's reaches that account
    expect((await api.post(EXCHANGE, { id_token: (await provider.idToken(sub)).idToken })).status).toBe(409);
  });

  it("never links the operator's account on an ID token naming its email", async () => {
    const service = await TestService.start({ OIDC_ISSUER: provider.issuer, OIDC_CLIENT_ID: CLIENT_ID, ADMIN_EMAIL: 'ops@dots.example', ADMIN_PASSWORD: 'ops-password' }, api.databaseUrl);
    try {
      const response = await service.post(EXCHANGE, { id_token: await craft({ email: 'OPS@dots.example' }) });
      expect(response.status).toBe(409);
      const admin = await service.db('users').where({ email: 'ops@dots.example' }).first('id', 'role');
      expect(admin.role).toBe('ADMIN');
      expect(await service.db('identities').where({ user_id: admin.id }).first()).toBeUndefined();
    } finally {
      await service.stop();
    }
  });

  it('links with the account\'s password (link_password), revoking its other sessions and API keys', async () => {
    const owner = await registeredWithKey('Linked.Person@example.com');
    expect(await keysOf(owner.user.id)).toBe(1);
    const sub = newUser({ email: 'linked.person@EXAMPLE.com' });

    const wrong = await api.post(EXCHANGE, { id_token: await craft({ sub, email: 'linked.person@EXAMPLE.com' }), link_password: 'not-the-password' });
    expect(wrong.status).toBe(401);
    expect(wrong.body.error).toEqual({ code: 'unauthorized', message: 'email or password is incorrect' });
    expect(await api.db('identities').where({ subject: sub }).first()).toBeUndefined();

    const response = await api.post(EXCHANGE, { id_token: (await provider.idToken(sub)).idToken, link_password: 'the-registrants-password' });
    expect(response.status).toBe(200);
    expect(response.body.user).toEqual(owner.user);
    expect(await api.db('ledger_entries').where({ user_id: owner.user.id }).count<{ count: string }[]>('* as count')).toEqual([{ count: '1' }]);
    // whoever held the account before must sign in again; the new token works
    expect((await api.get('/api/auth/me', { token: owner.token })).status).toBe(401);
    expect(await keysOf(owner.user.id)).toBe(0);
    expect((await api.get('/api/auth/me', { token: response.body.token })).status).toBe(200);
    // the password still works, and the sub signs in to the account from now on without one
    expect((await api.post('/api/auth/login', { email: 'Linked.Person@example.com', password: 'the-registrants-password' })).status).toBe(200);
    expect((await api.post(EXCHANGE, { id_token: (await provider.idToken(sub)).idToken })).body.user.id).toBe(owner.user.id);
  });

  it('refuses an email the provider did not verify (422), creating and linking nothing', async () => {
    const registered = await api.register({ email: 'unverified@example.com' });
    const before = await counts();
    for (const email of ['unverified@example.com', 'fresh-unverified@example.com']) {
      const response = await api.post(EXCHANGE, { id_token: await craft({ email, email_verified: false }) });
      expect(response.status).toBe(422);
      expect(response.body.error.code).toBe('unprocessable');
    }
    const noEmail = await api.post(EXCHANGE, { id_token: await craft({}) });
    expect(noEmail.status).toBe(422);
    expect(await counts()).toEqual(before);
    expect(await api.db('identities').where({ user_id: registered.user.id }).first()).toBeUndefined();
  });

  it('refuses (409) an email whose account is linked to another sub of the provider', async () => {
    const first = await api.post(EXCHANGE, { id_token: await craft({ email: 'shared@idp.example' }) });
    expect(first.status).toBe(200);
    const before = await counts();
    const other = await api.post(EXCHANGE, { id_token: await craft({ email: 'shared@idp.example' }) });
    expect(other.status).toBe(409);
    expect(other.body.error.code).toBe('conflict');
    expect(await counts()).toEqual(before);
  });
});

describe('bad tokens', () => {
  const none = (claims: JWTPayload) =>
    `${Buffer.from(JSON.stringify({ alg: 'none', typ: 'JWT' })).toString('base64url')}.${Buffer.from(JSON.stringify(claims)).toString('base64url')}.`;

  it.each([
    ['an expired token', () => craft({ exp: Math.floor(Date.now() / 1000) - 3600, iat: Math.floor(Date.now() / 1000) - 7200 }), 'it has expired'],
    ['a token not valid yet', () => craft({ nbf: Math.floor(Date.now() / 1000) + 3600 }), 'it is not valid yet'],
    ['a token for another audience', () => craft({ aud: 'another-client' }), "its 'aud' claim is not the expected one"],
    ['a token of another issuer', () => craft({ iss: 'https://evil.example' }), "its 'iss' claim is not the expected one"],
    ['a token with several audiences issued to another party', () => craft({ aud: [CLIENT_ID, 'other'], azp: 'other' }), 'it was issued to another party (azp)'],
    ['an unsigned token (alg none)', () => none({ iss: provider.issuer, aud: CLIENT_ID, sub: 'x', email: 'none@x.example', email_verified: true, exp: 9e9, iat: 1 }), 'it is not signed with an accepted algorithm'],
    ['a token signed with a key the provider does not publish', async () => craft({}, { key: (await generateKeyPair('RS256')).privateKey, kid: 'stranger' }), 'it is signed with a key the provider does not publish'],
    ['a token signed by another key under the published kid', async () => craft({}, { key: (await generateKeyPair('RS256')).privateKey }), 'its signature does not verify'],
    ['a token signed with an algorithm not allowed', async () => craft({}, { key: (await generateKeyPair('ES256')).privateKey, alg: 'ES256' }), 'it is not signed with an accepted algorithm'],
    ['an HMAC token (no client secret configured)', async () => craft({}, { key: new TextEncoder().encode('guess') as never, alg: 'HS256' }), 'it is not signed with an accepted algorithm'],
    ['a token whose signature was tampered with', async () => `${(await craft({})).slice(0, -4)}AAAA`, 'its signature does not verify'],
    ['something that is not a JWT', () => Promise.resolve('not-a-jwt'), 'it is not a well-formed signed JWT'],
    ['a token whose sub is not a string', () => craft({ sub: ['a', 'b'] as never }), "its 'sub' claim is not an identifier"],
    ['an access token (typ at+jwt)', () => craft({ email: 'at@idp.example' }, { typ: 'at+jwt' }), 'it is not an ID token (typ at+jwt)'],
    ['a token issued to another party (azp) with one audience', () => craft({ email: 'azp@idp.example', azp: 'another-client' }), 'it was issued to another party (azp)'],
    ['a token issued a year ago (still unexpired)', () => craft({ email: 'old@idp.example', iat: Math.floor(Date.now() / 1000) - 365 * 86400 }), 'it was issued more than 600 s ago'],
    ['a token issued in the future', () => craft({ email: 'future@idp.example', iat: Math.floor(Date.now() / 1000) + 3600 }), 'it was issued in the future'],
  ])('refuses %s with 401 and creates nothing', async (_, make, message) => {
    const idToken = await make();
    const before = await counts();
    const response = await api.post(EXCHANGE, { id_token: idToken });
    expect(response.status).toBe(401);
    expect(response.body.error).toEqual({ code: 'unauthorized', message: `the ID token is not accepted: ${message}` });
    expect(await counts()).toEqual(before);
  });

  it('accepts an ID token sent without a nonce once: its copy is refused', async () => {
    const idToken = await craft({ email: 'once@idp.example' });
    const first = await api.post(EXCHANGE, { id_token: idToken });
    expect(first.status).toBe(200);
    const before = await counts();
    const again = await api.post(EXCHANGE, { id_token: idToken });
    expect(again.status).toBe(401);
    expect(again.body.error.message).toBe('the ID token is not accepted: it was used before (without a nonce, an ID token is accepted once)');
    expect(await counts()).toEqual(before);
    // with a typ of JWT, as most providers write it, a fresh token is accepted
    expect((await api.post(EXCHANGE, { id_token: await craft({ email: 'typed@idp.example' }, { typ: 'JWT' }) })).status).toBe(200);
  });

  it('refuses a token whose nonce differs from the one sent', async () => {
    const sub = newUser();
    const { idToken } = await provider.idToken(sub);
    const response = await api.post(EXCHANGE, { id_token: idToken, nonce: 'another-nonce' });
    expect(response.status).toBe(401);
    expect(response.body.error.message).toBe('the ID token is not accepted: its nonce does not match');
    expect(await api.db('identities').where({ subject: sub }).first()).toBeUndefined();
  });

  it('refuses malformed requests with 400', async () => {
    for (const body of [{}, { id_token: '' }, { id_token: 'x', code: 'y' }, { code: 'c', code_verifier: 'short', redirect_uri: 'https://app.example/cb' }]) {
      const response = await api.post(EXCHANGE, body);
      expect(response.status).toBe(400);
      expect(response.body.error.code).toBe('invalid_request');
    }
    const query = await api.post(EXCHANGE, { code: 'c', code_verifier: 'v'.repeat(43), redirect_uri: 'https://app.example/cb?x=1' });
    expect(query.status).toBe(400);
  });

  it('fetches the keys at most once for a burst of tokens signed with unknown keys', async () => {
    await new Promise((resolve) => setTimeout(resolve, COOLDOWN_SECS * 1000 + 100));
    const before = provider.count('/jwks');
    const strangers = await Promise.all(Array.from({ length: 8 }, async (_, i) => craft({}, { key: (await generateKeyPair('RS256')).privateKey, kid: `stranger-${i}` })));
    const responses = await Promise.all(strangers.map((idToken) => api.post(EXCHANGE, { id_token: idToken })));
    expect(responses.map((r) => r.status)).toEqual(Array(8).fill(401));
    expect(provider.count('/jwks') - before).toBeLessThanOrEqual(1);
  });
});

describe('HMAC-signed ID tokens', () => {
  it('are accepted with OIDC_CLIENT_SECRET and HS256 allowed, and refused when signed with another secret', async () => {
    const secret = 'a-client-secret-of-32-characters!';
    const service = await TestService.start({ OIDC_ISSUER: provider.issuer, OIDC_CLIENT_ID: CLIENT_ID, OIDC_CLIENT_SECRET: secret, OIDC_ALLOWED_ALGS: 'RS256,HS256' });
    try {
      const signed = await craft({ email: 'hmac@idp.example' }, { key: new TextEncoder().encode(secret) as never, alg: 'HS256' });
      const accepted = await service.post(EXCHANGE, { id_token: signed });
      expect(accepted.status).toBe(200);
      expect(accepted.body.user.email).toBe('hmac@idp.example');
      const before = await counts(service);
      const forged = await craft({ email: 'forged@idp.example' }, { key: new TextEncoder().encode('another-secret-of-32-characters!!') as never, alg: 'HS256' });
      const refused = await service.post(EXCHANGE, { id_token: forged });
      expect(refused.status).toBe(401);
      expect(refused.body.error.message).toBe('the ID token is not accepted: its signature does not verify');
      expect(await counts(service)).toEqual(before);
    } finally {
      await service.stop();
    }
  });
});

describe('key rotation at the provider', () => {
  it('is followed: a token signed with the new key is accepted after one fetch of the keys', async () => {
    const before = await api.post(EXCHANGE, { id_token: (await provider.idToken(newUser())).idToken });
    expect(before.status).toBe(200);
    await provider.rotateKeys();
    await new Promise((resolve) => setTimeout(resolve, COOLDOWN_SECS * 1000 + 100));
    const fetches = provider.count('/jwks');
    const sub = newUser();
    const { idToken } = await provider.idToken(sub);
    expect(JSON.parse(Buffer.from(idToken.split('.')[0]!, 'base64url').toString()).kid).toBe(provider.keys[0]!.kid);
    const after = await api.post(EXCHANGE, { id_token: idToken });
    expect(after.status).toBe(200);
    expect(provider.count('/jwks')).toBe(fetches + 1);
    // The new keys are cached: more sign-ins fetch nothing.
    expect((await api.post(EXCHANGE, { id_token: (await provider.idToken(sub)).idToken })).body.user.id).toBe(after.body.user.id);
    expect(provider.count('/jwks')).toBe(fetches + 1);
  });
});

describe('a provider that cannot be reached', () => {
  it('answers 503 when nothing listens at the issuer, and creates nothing', async () => {
    const closed = http.createServer();
    await new Promise<void>((resolve) => closed.listen(0, '127.0.0.1', resolve));
    const port = (closed.address() as AddressInfo).port;
    await new Promise((resolve) => closed.close(resolve));
    const service = await TestService.start({ OIDC_ISSUER: `http://127.0.0.1:${port}`, OIDC_CLIENT_ID: CLIENT_ID });
    try {
      const before = await counts(service);
      for (const body of [{ id_token: await craft({}) }, { code: 'c', code_verifier: 'v'.repeat(43), redirect_uri: 'https://app.example/cb' }]) {
        const response = await service.post(EXCHANGE, body);
        expect(response.status).toBe(503);
        expect(response.body.error).toEqual({ code: 'unavailable', message: 'the identity provider cannot be reached; try again later' });
      }
      expect(await counts(service)).toEqual(before);
    } finally {
      await service.stop();
    }
  });

  it('answers 503 within the timeout when the provider does not answer', async () => {
    const silent = await TestProvider.start();
    silent.hang = true;
    const service = await TestService.start({ OIDC_ISSUER: silent.issuer, OIDC_CLIENT_ID: CLIENT_ID, OIDC_TIMEOUT_SECS: '1' });
    try {
      const started = Date.now();
      const response = await service.post(EXCHANGE, { id_token: await craft({}) });
      expect(response.status).toBe(503);
      expect(Date.now() - started).toBeLessThan(5000);
      // Within the cooldown after the failure, the provider is not asked again.
      expect((await service.post(EXCHANGE, { id_token: await craft({}) })).status).toBe(503);
      expect(silent.count('/.well-known/openid-configuration')).toBe(1);
    } finally {
      await service.stop();
      await silent.stop();
    }
  });

  it('answers 503 when the key set cannot be fetched, and recovers once it can', async () => {
    const flaky = await TestProvider.start();
    const service = await TestService.start({ OIDC_ISSUER: flaky.issuer, OIDC_CLIENT_ID: CLIENT_ID, OIDC_TIMEOUT_SECS: '1', OIDC_JWKS_COOLDOWN_SECS: '1' });
    try {
      flaky.users.set('flaky-user', { email: 'flaky@idp.example', email_verified: true });
      const { idToken } = await flaky.idToken('flaky-user');
      // Discovery is answered, the keys are not.
      flaky.hold = (path) => path === '/jwks';
      const response = await service.post(EXCHANGE, { id_token: idToken });
      expect(response.status).toBe(503);
      expect(flaky.count('/jwks')).toBe(1);
      flaky.hold = undefined;
      const retried = await service.post(EXCHANGE, { id_token: idToken });
      expect(retried.status).toBe(200);
    } finally {
      await service.stop();
      await flaky.stop();
    }
  });
});

describe('without OIDC_ISSUER', () => {
  it('answers 404 and makes no request to any provider; password sign-in is unchanged', async () => {
    const plain = await TestService.start();
    try {
      const before = await counts(plain);
      for (const body of [{ id_token: await craft({}) }, await provider.authorize(newUser())]) {
        const sent = provider.requests.length;
        const response = await plain.post(EXCHANGE, body);
        expect(response.status).toBe(404);
        expect(response.body.error).toEqual({ code: 'not_found', message: 'sign-in through an identity provider is not configured on this service' });
        expect(provider.requests.length).toBe(sent);
      }
      expect(await counts(plain)).toEqual(before);
      const registered = await plain.register();
      expect((await plain.post('/api/auth/login', { email: registered.user.email, password: 'correct-horse-battery' })).status).toBe(200);
    } finally {
      await plain.stop();
    }
  });
});

import { createHash, randomBytes } from 'node:crypto';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { exportJWK, generateKeyPair, type JWK } from 'jose';
import Provider from 'oidc-provider';

/** A user of the test provider: the claims its ID tokens carry. */
export interface ProviderUser {
  email?: string;
  email_verified?: boolean;
  name?: string;
  preferred_username?: string;
}

export const CLIENT_ID = 'dots-app';
export const REDIRECT_URI = 'http://127.0.0.1/signed-in';

/** An RS256 signing key: the private JWK (with its kid) and the key itself. */
export async function signingKey(kid: string): Promise<{ kid: string; jwk: JWK; privateKey: CryptoKey }> {
  const { privateKey } = await generateKeyPair('RS256', { extractable: true });
  const jwk = { ...(await exportJWK(privateKey)), kid, alg: 'RS256', use: 'sig' };
  return { kid, jwk, privateKey };
}

/**
 * A real OpenID provider (oidc-provider) on a random loopback port, with its own keys and its development
 * login and consent pages, driven over HTTP. The HTTP server in front of it counts the requests it gets
 * (by path), can hold requests unanswered (`hang`: all of them, or those `hold` picks by path), and passes the others to the provider of the moment:
 * `rotateKeys` replaces the provider by one signing with a new key that also publishes the old one, as a
 * provider rotating its keys does.
 */
export class TestProvider {
  readonly users = new Map<string, ProviderUser>();
  readonly requests: string[] = [];
  hang = false;
  hold: ((path: string) => boolean) | undefined;
  keys: Array<Awaited<ReturnType<typeof signingKey>>> = [];
  #provider!: Provider;

  private constructor(
    private readonly server: http.Server,
    readonly issuer: string,
  ) {}

  static async start(): Promise<TestProvider> {
    const held: http.ServerResponse[] = [];
    const server = http.createServer((req, res) => {
      const provider = target;
      const path = new URL(req.url ?? '/', provider.issuer).pathname;
      provider.requests.push(path);
      if (provider.hang || provider.hold?.(path)) {
        held.push(res);
        return;
      }
      void provider.#provider.callback()(req, res);
    });
    server.on('close', () => held.forEach((res) => res.destroy()));
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const target = new TestProvider(server, `http://127.0.0.1:${(server.address() as AddressInfo).port}`);
    target.keys = [await signingKey('key-1')];
    target.#provider = target.#create();
    return target;
  }

  /** Requests whose path is `path` (e.g. the key set's, `/jwks`). */
  count(path: string): number {
    return this.requests.filter((p) => p === path).length;
  }

  /** Signs with a new key from now on, publishing it and the previous one. */
  async rotateKeys(): Promise<void> {
    this.keys = [await signingKey(`key-${this.keys.length + 1}`), ...this.keys];
    this.#provider = this.#create();
  }

  #create(): Provider {
    const provider = new Provider(this.issuer, {
      clients: [
        {
          client_id: CLIENT_ID,
          token_endpoint_auth_method: 'none',
          redirect_uris: [REDIRECT_URI],
          grant_types: ['authorization_code'],
          response_types: ['code'],
        },
      ],
      jwks: { keys: this.keys.map((key) => key.jwk) },
      cookies: { keys: ['test-provider-cookie-key'] },
      claims: { openid: ['sub'], email: ['email', 'email_verified'], profile: ['name', 'preferred_username'] },
      // The ID token carries the claims of the scopes granted (there is no userinfo call in this flow).
      conformIdTokenClaims: false,
      features: { devInteractions: { enabled: true } },
      findAccount: (_ctx, sub) => {
        const user = this.users.get(sub);
        if (!user) return undefined;
        return { accountId: sub, claims: () => ({ sub, ...user }) };
      },
    });
    // oidc-provider's development pages and memory adapter warn on every start: expected here.
    provider.on('server_error', (_ctx, error) => console.error('test provider error', error));
    return provider;
  }

  /**
   * Signs `sub` in at the provider through its login and consent pages (a code flow with PKCE and a
   * nonce), and answers what the app would then hold: the code, its verifier and the nonce.
   */
  async authorize(sub: string): Promise<{ code: string; code_verifier: string; redirect_uri: string; nonce: string }> {
    const codeVerifier = randomBytes(32).toString('base64url');
    const nonce = randomBytes(8).toString('hex');
    const authorization = new URL('/auth', this.issuer);
    authorization.search = new URLSearchParams({
      client_id: CLIENT_ID,
      response_type: 'code',
      scope: 'openid email profile',
      redirect_uri: REDIRECT_URI,
      code_challenge: createHash('sha256').update(codeVerifier).digest('base64url'),
      code_challenge_method: 'S256',
      nonce,
      state: randomBytes(8).toString('hex'),
    }).toString();
    const cookies = new Map<string, string>();
    let next: { url: string; method: 'GET' | 'POST'; form?: Record<string, string> } = { url: authorization.href, method: 'GET' };
    for (let step = 0; step < 12; step += 1) {
      const response = await fetch(next.url, {
        method: next.method,
        redirect: 'manual',
        headers: {
          cookie: [...cookies].map(([name, value]) => `${name}=${value}`).join('; '),
          ...(next.form ? { 'content-type': 'application/x-www-form-urlencoded' } : {}),
        },
        body: next.form ? new URLSearchParams(next.form).toString() : undefined,
      });
      for (const cookie of response.headers.getSetCookie()) {
        const [pair] = cookie.split(';');
        const [name, ...value] = pair!.split('=');
        cookies.set(name!.trim(), value.join('='));
      }
      const location = response.headers.get('location');
      if (location) {
        const url = new URL(location, next.url);
        if (url.href.startsWith(REDIRECT_URI)) {
          const code = url.searchParams.get('code');
          if (!code) throw new Error(`the provider answered without a code: ${url.search}`);
          return { code, code_verifier: codeVerifier, redirect_uri: REDIRECT_URI, nonce };
        }
        next = { url: url.href, method: 'GET' };
        continue;
      }
      const page = await response.text();
      if (response.status !== 200 || !next.url.includes('/interaction/')) throw new Error(`unexpected provider answer ${response.status}: ${page.slice(0, 300)}`);
      // The development pages: a login form (any password), then a consent form.
      next = { url: next.url, method: 'POST', form: page.includes('name="login"') ? { prompt: 'login', login: sub, password: 'any' } : { prompt: 'consent' } };
    }
    throw new Error('the sign-in at the provider did not end');
  }

  /** The ID token of a code, redeemed at the token endpoint as a public client. */
  async idToken(sub: string): Promise<{ idToken: string; nonce: string }> {
    const { code, code_verifier, redirect_uri, nonce } = await this.authorize(sub);
    const response = await fetch(new URL('/token', this.issuer), {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ grant_type: 'authorization_code', code, code_verifier, redirect_uri, client_id: CLIENT_ID }).toString(),
    });
    const body = (await response.json()) as { id_token?: string };
    if (!body.id_token) throw new Error(`no ID token: ${JSON.stringify(body)}`);
    return { idToken: body.id_token, nonce };
  }

  async stop(): Promise<void> {
    this.server.closeAllConnections();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }
}

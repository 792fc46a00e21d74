import { randomBytes } from 'node:crypto';
import pg from 'pg';
import { inject } from 'vitest';
import { loadConfig, type Config } from '../../src/config.js';
import * as accounts from '../../src/db/repositories/accounts.js';
import { generateToken, hashToken } from '../../src/domain/accounts/tokens.js';
import { createLogger } from '../../src/logger.js';
import { startService, type RunningService } from '../../src/server.js';
import { ContractChecker } from './contract.js';

const checker = new ContractChecker();

/**
 * The suite makes many requests from one address and one account: the services it starts run without
 * request budgets and with a long password-hashing queue, unless a test sets them (the abuse-control tests).
 */
export const UNLIMITED: Record<string, string> = {
  RATE_LIMITS: 'off',
  PASSWORD_HASH_QUEUE: '10000',
  WS_MAX_CONNECTIONS_PER_ADDRESS: '100000',
  WS_SNAPSHOTS_PER_SEC: '1000000',
};

export interface ApiResponse<T = any> {
  status: number;
  headers: Headers;
  body: T;
}

export interface RequestOptions {
  token?: string;
  body?: unknown;
  /** Sent as is, instead of JSON-encoding `body`. */
  rawBody?: string | Uint8Array;
  headers?: Record<string, string>;
}

/**
 * Creates a fresh database from the migrated template of this test run (or, `empty`, one with no schema at
 * all, as an operator's new database is); returns its URL.
 */
export async function createTestDatabase(options: { empty?: boolean } = {}): Promise<string> {
  const { serverUrl, template } = inject('testDatabase');
  const name = `dots_test_${randomBytes(6).toString('hex')}`;
  const admin = new pg.Client({ connectionString: serverUrl });
  await admin.connect();
  await admin.query(options.empty ? `create database ${name}` : `create database ${name} template ${template}`);
  await admin.end();
  const url = new URL(serverUrl);
  url.pathname = `/${name}`;
  return url.toString();
}

/**
 * An HTTP client of a running service. Every response is checked against the OpenAPI document; a
 * mismatch fails the test that made it.
 */
export class ApiClient {
  constructor(readonly baseUrl: string) {}

  async request<T = any>(method: string, path: string, options: RequestOptions = {}): Promise<ApiResponse<T>> {
    const headers: Record<string, string> = { ...options.headers };
    if (options.token) headers.authorization = `Bearer ${options.token}`;
    let body: string | Uint8Array | undefined = options.rawBody;
    if (body === undefined && options.body !== undefined) body = JSON.stringify(options.body);
    if (body !== undefined && !Object.keys(headers).some((h) => h.toLowerCase() === 'content-type')) headers['content-type'] = 'application/json';
    const response = await fetch(`${this.baseUrl}${path}`, { method, headers, body: typeof body === 'string' || body === undefined ? body : new Blob([Uint8Array.from(body)]) });
    const text = await response.text();
    const contentType = response.headers.get('content-type');
    const parsed: unknown = contentType?.startsWith('application/json') && text ? JSON.parse(text) : text;
    const problems = checker.check({ method, path }, { status: response.status, contentType, body: parsed });
    if (problems.length > 0) throw new Error(`response does not match the OpenAPI document:\n${problems.join('\n')}`);
    return { status: response.status, headers: response.headers, body: parsed as T };
  }

  get = <T = any>(path: string, options?: RequestOptions) => this.request<T>('GET', path, options);
  post = <T = any>(path: string, body?: unknown, options?: RequestOptions) => this.request<T>('POST', path, { ...options, body });
  delete = <T = any>(path: string, options?: RequestOptions) => this.request<T>('DELETE', path, options);

  /** /readyz's answer once it is 200, or its last answer after `timeoutMs` (a process that has just started loads its search index first). */
  async untilReady(timeoutMs = 10_000): Promise<ApiResponse> {
    const deadline = Date.now() + timeoutMs;
    let ready = await this.get('/readyz');
    while (ready.status !== 200 && Date.now() < deadline) {
      await new Promise((resolve) => setTimeout(resolve, 50));
      ready = await this.get('/readyz');
    }
    return ready;
  }

  /** The body of a GET that must answer 200. */
  async read(path: string, token?: string): Promise<any> {
    const response = await this.get(path, { token });
    if (response.status !== 200) throw new Error(`GET ${path}: ${response.status} ${JSON.stringify(response.body)}`);
    return response.body;
  }

  /** Every page of a cursor collection, following `cursor` until it is null. */
  async walk(path: string, key: string, token?: string): Promise<{ items: any[]; pages: number }> {
    const items: any[] = [];
    let pages = 0;
    let cursor: string | null = '';
    const separator = path.includes('?') ? '&' : '?';
    while (cursor !== null) {
      const body: any = await this.read(cursor === '' ? path : `${path}${separator}cursor=${encodeURIComponent(cursor)}`, token);
      items.push(...body[key]);
      pages += 1;
      cursor = body.cursor;
      if (pages > 500) throw new Error('the cursor walk does not end');
    }
    return { items, pages };
  }

  /** Registers a fresh account and returns its token and user. */
  async register(overrides: Record<string, string> = {}): Promise<{ token: string; user: { id: string; email: string; role: string } }> {
    const email = `user-${randomBytes(5).toString('hex')}@example.com`;
    const response = await this.post('/api/auth/register', { email, password: 'correct-horse-battery', ...overrides });
    if (response.status !== 201) throw new Error(`register failed: ${response.status} ${JSON.stringify(response.body)}`);
    return response.body;
  }
}

/** The service under test, in this process, on its own copy of the migrated template database, over real HTTP. */
export class TestService extends ApiClient {
  private constructor(
    readonly service: RunningService,
    readonly databaseUrl: string,
    private readonly config: Config,
  ) {
    super(service.url);
  }

  /** On a fresh database, or on `databaseUrl` (another process of the same service). */
  static async start(env: Record<string, string> = {}, databaseUrl?: string): Promise<TestService> {
    databaseUrl ??= await createTestDatabase();
    const config: Config = loadConfig({ PORT: '0', LOG_LEVEL: 'silent', DATABASE_URL: databaseUrl, SEED: 'none', ...UNLIMITED, ...env });
    const service = await startService(config, createLogger(config.logLevel));
    await service.ready;
    return new TestService(service, databaseUrl, config);
  }

  get db() {
    return this.service.db;
  }

  /**
   * A USER account with the opening balance and a session, written as registration writes them but without a
   * password: for the tests that need many accounts and do not test registration, whose time is mostly the
   * hashing of the password.
   */
  async account(): Promise<{ token: string; user: { id: string; email: string; role: string } }> {
    const name = `user_${randomBytes(5).toString('hex')}`;
    const token = generateToken();
    const user = await this.db.transaction(async (tx) => {
      const row = await accounts.insertUser(tx, { email: `${name}@example.com`, username: name, name: '', passwordHash: null, role: 'USER' });
      await accounts.grantOpeningBalance(tx, row.id, this.config.startingBalance);
      await accounts.insertSession(tx, { userId: row.id, tokenHash: hashToken(token), expiresAt: new Date(Date.now() + this.config.tokenTtlSecs * 1000) });
      return row;
    });
    return { token, user: { id: user.id, email: user.email, role: user.role } };
  }

  async stop(): Promise<void> {
    await this.service.stop();
  }
}

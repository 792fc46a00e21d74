import { execFile } from 'node:child_process';
import { mkdtemp, rm, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MarketFactory } from '../support/markets.js';
import { TestService } from '../support/service.js';

const run = promisify(execFile);
const root = path.resolve(import.meta.dirname, '../..');
const bin = (name: string) => path.join(root, 'node_modules/.bin', name);
const ADMIN = { email: 'clients-admin@example.com', password: 'clients-admin-password' };

/** What each client script prints: the steps' statuses and figures. */
interface Outcome {
  registered: string;
  loggedIn: boolean;
  events: number;
  order: { status: string; count: string; time_in_force: string; action: string };
  balance: { balance: string; reserved: string };
}

const TS_CONFIG = JSON.stringify({
  compilerOptions: { target: 'ES2022', module: 'NodeNext', moduleResolution: 'NodeNext', strict: true, noEmit: true, skipLibCheck: true, types: ['node'] },
  include: ['*.ts'],
});

// openapi-typescript (default flags) and openapi-fetch: the types alone must accept an order of the four required fields.
const OPENAPI_FETCH_SCRIPT = `import createClient from 'openapi-fetch';
import type { paths } from './api.js';

const client = createClient<paths>({ baseUrl: process.env.BASE_URL! });
const email = process.env.EMAIL!;
const password = 'correct-horse-battery';
const registered = await client.POST('/api/auth/register', { body: { email, password } });
if (!registered.data) throw new Error('register: ' + JSON.stringify(registered.error));
const login = await client.POST('/api/auth/login', { body: { email, password } });
if (!login.data) throw new Error('login: ' + JSON.stringify(login.error));
const headers = { Authorization: \`Bearer \${login.data.token}\` };
const events = await client.GET('/api/events', { params: { query: { limit: 10 } } });
if (!events.data) throw new Error('events: ' + JSON.stringify(events.error));
const placed = await client.POST('/api/portfolio/orders', { body: { ticker: process.env.TICKER!, side: 'yes', count: '2', price: '0.45' }, headers });
if (!placed.data) throw new Error('order: ' + JSON.stringify(placed.error));
const balance = await client.GET('/api/portfolio/balance', { headers });
if (!balance.data) throw new Error('balance: ' + JSON.stringify(balance.error));
const { order } = placed.data;
console.log(JSON.stringify({
  registered: registered.data.user.email,
  loggedIn: login.data.token.length > 0,
  events: events.data.events.length,
  order: { status: order.status, count: order.count, time_in_force: order.time_in_force, action: order.action },
  balance: { balance: balance.data.balance, reserved: balance.data.reserved },
}));
`;

// openapi-zod-client (zodios, with its response validation on): every answer is parsed by the generated schemas.
const ZOD_SCRIPT = `import { createApiClient } from './zod-client.js';

const client = createApiClient(process.env.BASE_URL!);
const email = process.env.EMAIL!;
const password = 'correct-horse-battery';
const registered = await client.registerAccount({ email, password });
const login = await client.loginAccount({ email, password });
const headers = { Authorization: \`Bearer \${login.token}\` };
const events = await client.listEvents({ queries: { limit: 10 } });
const placed = await client.placeOrder({ ticker: process.env.TICKER!, side: 'yes', count: '2', price: '0.45' }, { headers });
const balance = await client.getBalance({ headers });
const { order } = placed;
console.log(JSON.stringify({
  registered: registered.user.email,
  loggedIn: login.token.length > 0,
  events: events.events.length,
  order: { status: order.status, count: order.count, time_in_force: order.time_in_force, action: order.action },
  balance: { balance: balance.balance, reserved: balance.reserved },
}));
`;

describe('clients generated from the served document', () => {
  let service: TestService;
  let dir: string;
  let ticker: string;
  /** What the one compiler run over both clients and their scripts printed, when it failed. */
  let typeErrors: string | undefined;
  beforeAll(async () => {
    service = await TestService.start({ ADMIN_EMAIL: ADMIN.email, ADMIN_PASSWORD: ADMIN.password });
    const markets = await MarketFactory.create(service, ADMIN, 'GENC');
    ticker = (await markets.newMarket()).ticker;
    // outside the project, so that no project configuration (redocly.yaml, tsconfig.json) applies
    dir = await mkdtemp(path.join(tmpdir(), 'dots-clients-'));
    await symlink(path.join(root, 'node_modules'), path.join(dir, 'node_modules'));
    await writeFile(path.join(dir, 'package.json'), JSON.stringify({ type: 'module', private: true }));
    await writeFile(path.join(dir, 'tsconfig.json'), TS_CONFIG);
    await Promise.all([
      run(bin('openapi-typescript'), [`${service.baseUrl}/openapi.json`, '-o', 'api.d.ts'], { cwd: dir }),
      run(bin('openapi-zod-client'), [`${service.baseUrl}/openapi.json`, '-o', 'zod-client.ts'], { cwd: dir }),
      writeFile(path.join(dir, 'openapi-fetch-client.ts'), OPENAPI_FETCH_SCRIPT),
      writeFile(path.join(dir, 'zod-client-script.ts'), ZOD_SCRIPT),
    ]);
    // One compiler run checks both clients with their scripts (the include is *.ts).
    try {
      await run(bin('tsc'), ['-p', 'tsconfig.json'], { cwd: dir });
    } catch (error) {
      typeErrors = (error as { stdout?: string }).stdout ?? String(error);
    }
  }, 240_000);
  afterAll(async () => {
    await service?.stop();
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  /** The script's outcome, once the clients and their scripts have type-checked. */
  async function typecheckAndRun(script: string, email: string): Promise<Outcome> {
    if (typeErrors !== undefined) throw new Error(`the generated clients do not type-check:\n${typeErrors}`);
    const { stdout } = await run(process.execPath, ['--import', 'tsx', script], { cwd: dir, env: { ...process.env, BASE_URL: service.baseUrl, EMAIL: email, TICKER: ticker } });
    return JSON.parse(stdout.trim().split('\n').at(-1)!) as Outcome;
  }

  function expectOutcome(outcome: Outcome, email: string): void {
    expect(outcome).toEqual({
      registered: email,
      loggedIn: true,
      events: 1,
      // the defaults the service applied to the omitted fields
      order: { status: 'OPEN', count: '2', time_in_force: 'GTC', action: 'buy' },
      // 1000 granted, 2 x 0.45 reserved by the resting buy
      balance: { balance: '1000.00', reserved: '0.90' },
    });
  }

  it('openapi-typescript (default flags) with openapi-fetch: type-checks and runs', async () => {
    expectOutcome(await typecheckAndRun('openapi-fetch-client.ts', 'fetch-client@example.com'), 'fetch-client@example.com');
  }, 180_000);

  it('openapi-zod-client (zodios, responses validated): type-checks and runs', async () => {
    expectOutcome(await typecheckAndRun('zod-client-script.ts', 'zod-client@example.com'), 'zod-client@example.com');
  }, 180_000);
});

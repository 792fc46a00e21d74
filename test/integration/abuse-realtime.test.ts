import { performance } from 'node:perf_hooks';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { describeLatency, p99, stallBound } from '../support/latency.js';
import type { RunningService } from '../../src/server.js';
import type { ApiClient } from '../support/service.js';
import { FeedClient, Markets, startFeedService } from '../support/realtime.js';

/**
 * Abuse controls of the real-time feed: sockets of a session closed at its logout or revocation, the caps
 * per client address (connections, order-book snapshots per second) and per connection (subscriptions),
 * and commands carrying text the database cannot store.
 */

const ADMIN = { email: 'feed-abuse-admin@dots.local', password: 'feed-abuse-password' };
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

let service: RunningService;
let api: ApiClient;
let admin: string;
let markets: Markets;
const clients: FeedClient[] = [];

beforeAll(async () => {
  // The periodic token check stays at its default (60 s): closing at logout must come from the notification.
  ({ service, api } = await startFeedService({
    ADMIN_EMAIL: ADMIN.email,
    ADMIN_PASSWORD: ADMIN.password,
    WS_MAX_CONNECTIONS_PER_ADDRESS: '6',
    WS_SNAPSHOTS_PER_SEC: '150',
    WS_MAX_SUBSCRIPTIONS: '20',
  }));
  admin = (await api.post('/api/auth/login', ADMIN)).body.token;
  markets = new Markets(api, () => admin, 'FAB');
});
afterEach(async () => {
  for (const client of clients) expect(client.problems, 'messages that do not match the AsyncAPI document').toEqual([]);
  for (const client of clients.splice(0)) client.close();
  // every test starts with no connection from this address (the per-address cap counts them)
  for (let i = 0; i < 250 && service.realtime.connections > 0; i++) await sleep(20);
});
afterAll(() => service.stop());

async function connect(token?: string): Promise<FeedClient> {
  const client = await FeedClient.connect(service.url, token);
  clients.push(client);
  return client;
}

describe('sessions', () => {
  it('closes the sockets of a token within 1 s of its logout, and only those', async () => {
    const user = await api.register();
    const other = await connect(user.token);
    const otherSession = await api.post('/api/auth/login', { email: user.user.email, password: 'correct-horse-battery' });
    const kept = await connect(otherSession.body.token);
    await other.subscribe(['user_orders']);
    await kept.subscribe(['user_orders']);

    const started = performance.now();
    expect((await api.post('/api/auth/logout', undefined, { token: user.token })).status).toBe(200);
    const closed = await other.closed;
    const ms = performance.now() - started;
    expect(ms).toBeLessThan(1000);
    expect(closed.code).toBe(1008);
    expect(other.messages.at(-1)).toEqual({ type: 'error', msg: { code: 103, msg: 'the session token was revoked or has expired' } });
    // the same account's other session keeps its socket
    await sleep(200);
    expect(kept.ws.readyState).toBe(kept.ws.OPEN);
  });

  it('closes the socket within 1 s of a revocation made in the database by hand', async () => {
    const user = await api.register();
    const client = await connect(user.token);
    await client.subscribe(['fill']);
    const started = performance.now();
    await service.db('sessions').where({ user_id: user.user.id }).update({ revoked_at: service.db.fn.now() });
    await client.closed;
    expect(performance.now() - started).toBeLessThan(1000);
  });
});

describe('caps per address and connection', () => {
  it('sends a further connection from the same address an error (105) and closes it', async () => {
    expect(service.realtime.connections).toBe(0);
    const open = await Promise.all(Array.from({ length: 6 }, () => connect()));
    const refused = await connect();
    const closed = await refused.closed;
    expect(closed.code).toBe(1008);
    expect(refused.messages).toEqual([{ type: 'error', msg: { code: 105, msg: 'too many connections from one address (at most 6)' } }]);
    // the open ones work; once one closes, a new one is accepted
    expect((await open[0]!.command('list_subscriptions'))[0].type).toBe('ok');
    open[1]!.close();
    await open[1]!.closed;
    await sleep(50);
    const again = await connect();
    expect((await again.command('list_subscriptions'))[0].type).toBe('ok');
  });

  it('refuses NUL and lone surrogates in a command with code 11 naming the field, and keeps the connection', async () => {
    const client = await connect();
    const [nul] = await client.command('subscribe', { channels: ['trade'], market_tickers: ['A\u0000B'] });
    expect(nul).toEqual({ id: 1, type: 'error', msg: { code: 11, msg: 'params.market_tickers.0 contains a NUL character' } });
    client.sendRaw('{"id":99,"cmd":"subscribe","params":{"channels":["trade"],"market_tickers":["\\ud800"]}}');
    await client.waitFor(() => client.messages.some((m) => m.id === 99), 'the reply to #99');
    expect(client.messages.find((m) => m.id === 99)).toEqual({ id: 99, type: 'error', msg: { code: 11, msg: 'params.market_tickers.0 contains a lone surrogate (not valid Unicode text)' } });
    expect((await client.command('list_subscriptions'))[0].type).toBe('ok');
  });

  it('a client subscribing 100 markets 50 times per second is refused by the snapshot cap while placements are not stalled (see stallBound)', { timeout: 180_000 }, async () => {
    const tickers: string[] = [];
    for (let i = 0; i < 100; i += 10) tickers.push(...(await Promise.all(Array.from({ length: 10 }, () => markets.create()))));
    const trader = await api.register();

    // warm-up of the placement path on the ten markets it then places on
    for (let i = 0; i < 20; i++) expect((await api.post('/api/portfolio/orders', { ticker: tickers[i % 10], side: 'yes', action: 'buy', count: '1', price: '0.10' }, { token: trader.token })).status).toBe(201);

    const place = async (count: number): Promise<number[]> => {
      const latencies: number[] = [];
      for (let i = 0; i < count; i++) {
        const started = performance.now();
        const response = await api.post('/api/portfolio/orders', { ticker: tickers[i % 10], side: 'yes', action: 'buy', count: '1', price: '0.20' }, { token: trader.token });
        latencies.push(performance.now() - started);
        expect(response.status).toBe(201);
      }
      return latencies;
    };
    // enough placements that the p99 is not just the slowest one; first without the flood
    const baseline = await place(150);

    const flooder = await connect();
    let flooding = true;
    let sent = 0;
    const floodStarted = performance.now();
    const flood = (async () => {
      while (flooding) {
        sent += 1;
        flooder.sendRaw(JSON.stringify({ id: sent, cmd: 'subscribe', params: { channels: ['orderbook_delta'], market_tickers: tickers } }));
        await sleep(20);
      }
    })();
    const latencies = await place(150);
    flooding = false;
    await flood;
    const floodSecs = (performance.now() - floodStarted) / 1000;
    await flooder.waitFor(() => flooder.messages.filter((m) => m.id !== undefined).length >= sent, `replies to the ${sent} subscribes`, 20_000);

    const replies = flooder.messages.filter((m) => m.id !== undefined);
    const subscribed = replies.filter((m) => m.type === 'subscribed');
    const refusedBySnapshotCap = replies.filter((m) => m.type === 'error' && m.msg.code === 106);
    expect(sent).toBeGreaterThan(20);
    // 150 markets per second: one subscribe of 100 per one-second window at most
    expect(subscribed.length).toBeGreaterThanOrEqual(1);
    expect(subscribed.length).toBeLessThanOrEqual(Math.ceil(floodSecs) + 1);
    expect(refusedBySnapshotCap.length).toBeGreaterThan(sent / 2);
    expect(refusedBySnapshotCap[0].msg.msg).toMatch(/^too many order-book snapshots: at most 150 markets per second from one address; retry in \d+ s$/);
    // every refusal is a documented one: the snapshot cap, or commands waiting beyond the queue
    for (const reply of replies) if (reply.type === 'error') expect([1, 106]).toContain(reply.msg.code);
    // the snapshots that were sent are whole: one per market per accepted subscribe
    expect(flooder.messages.filter((m) => m.type === 'orderbook_snapshot').length).toBe(subscribed.length * 100);
    console.log(describeLatency('placements during the snapshot flood', baseline, latencies));
    expect(p99(latencies), `placement latencies (ms), baseline p99 ${p99(baseline).toFixed(0)} ms: ${latencies.map((l) => l.toFixed(0)).join(' ')}`).toBeLessThan(stallBound(baseline));
  });

  it('refuses subscriptions beyond the per-connection cap with code 102', async () => {
    const client = await connect();
    for (let i = 0; i < 20; i++) await client.subscribe(['trade']);
    const [refused] = await client.command('subscribe', { channels: ['trade'] });
    expect(refused.msg).toEqual({ code: 102, msg: 'at most 20 subscriptions per connection' });
  });
});

/* eslint max-lines: ["error", { "max": 500, "skipBlankLines": true, "skipComments": true }] -- its cases share one running service (an embedded PostgreSQL) and its fixtures: a split would start another */
import { Parser } from '@asyncapi/parser';
import fc from 'fast-check';
import { readFileSync } from 'node:fs';
import WebSocket from 'ws';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { pruneFeedEvents, readFeedEvents, type SqlClient } from '../../src/db/repositories/feed.js';
import type { FeedRecord } from '../../src/domain/feed/types.js';
import { ASYNCAPI_PATH, type RunningService } from '../../src/server.js';
import type { ApiClient, ApiResponse } from '../support/service.js';
import { applyBook, asyncapi, asyncapiDocument, FeedClient, Markets, seqGaps, startFeedService, wsUrl } from '../support/realtime.js';

/**
 * The real-time feed (openapi/asyncapi.yaml), over a real WebSocket on the
 * service's own server: the upgrade and its authentication, the commands and their errors, the order-book
 * snapshot plus deltas against the REST order book after random orders, cancels and decreases, trades and
 * tickers, the private channels (never another account's events; every kind of cancel), seq without gaps,
 * pings, and every message validated against the AsyncAPI document (openapi/asyncapi.yaml).
 */

const ADMIN = { email: 'realtime-admin@dots.local', password: 'realtime-password' };

let service: RunningService;
let api: ApiClient;
let admin: string;
let markets: Markets;
const clients: FeedClient[] = [];

beforeAll(async () => {
  ({ service, api } = await startFeedService(
    { ADMIN_EMAIL: ADMIN.email, ADMIN_PASSWORD: ADMIN.password, ORDER_HEARTBEAT_TIMEOUT_SECS: '1', ORDER_HEARTBEAT_SWEEP_INTERVAL_SECS: '1' },
    { realtime: { pingIntervalMs: 300, revalidateIntervalMs: 600 } },
  ));
  admin = (await api.post('/api/auth/login', ADMIN)).body.token;
  markets = new Markets(api, () => admin, 'RTF');
});
afterEach(() => {
  for (const client of clients) expect(client.problems, 'messages that do not match the AsyncAPI document').toEqual([]);
});
afterAll(async () => {
  for (const client of clients) client.close();
  await service.stop();
});

async function connect(token?: string): Promise<FeedClient> {
  const client = await FeedClient.connect(service.url, token);
  clients.push(client);
  return client;
}

async function place(token: string, body: Record<string, unknown>): Promise<any> {
  const response = await api.post('/api/portfolio/orders', body, { token });
  if (response.status !== 201) throw new Error(`placing ${JSON.stringify(body)}: ${response.status} ${JSON.stringify(response.body)}`);
  return response.body.order;
}

async function restBook(ticker: string): Promise<{ yes: Array<[string, string]>; no: Array<[string, string]> }> {
  return (await api.get(`/api/markets/${ticker}/orderbook`)).body.orderbook;
}

/** Waits until the book the subscription built equals the REST order book, then checks it exactly. */
async function expectBookInSync(client: FeedClient, sid: number, ticker: string): Promise<void> {
  const rest = await restBook(ticker);
  await client.waitFor(() => JSON.stringify(applyBook(client.ofSid(sid))) === JSON.stringify(rest), `the book of sid ${sid} to match REST`, 10_000).catch(() => undefined);
  expect(applyBook(client.ofSid(sid))).toEqual(rest);
  expect(seqGaps(client.ofSid(sid))).toEqual([]);
}

describe('GET /ws: the upgrade', () => {
  it('refuses an invalid token with 401 before upgrading, and any other path with 404', async () => {
    await expect(FeedClient.connect(service.url, 'dots_not-a-real-token')).rejects.toMatchObject({ status: 401 });
    const malformed = new WebSocket(wsUrl(service.url), { headers: { authorization: 'Basic abc' } });
    const status = await new Promise((resolve) => malformed.once('unexpected-response', (_q, r) => resolve(r.statusCode)));
    expect(status).toBe(401);
    const elsewhere = new WebSocket(wsUrl(service.url, '/api/ws'));
    expect(await new Promise((resolve) => elsewhere.once('unexpected-response', (_q, r) => resolve(r.statusCode)))).toBe(404);
  });

  it('accepts a connection without a token for the public channels only, and an auth command later', async () => {
    const ticker = await markets.create();
    const client = await connect();
    const [sid] = await client.subscribe(['trade'], [ticker]);
    expect(sid).toBe(1);
    const [refused] = await client.command('subscribe', { channels: ['fill'] });
    expect(refused).toMatchObject({ type: 'error', msg: { code: 9 } });
    const [bad] = await client.command('auth', { token: 'dots_nope' });
    expect(bad).toMatchObject({ type: 'error', msg: { code: 9 } });
    const user = await api.register();
    const [ok] = await client.command('auth', { token: user.token });
    expect(ok).toEqual({ id: ok.id, type: 'authenticated', msg: { user_id: user.user.id } });
    const [again] = await client.command('auth', { token: user.token });
    expect(again).toMatchObject({ type: 'error', msg: { code: 11 } });
    expect(await client.subscribe(['fill', 'user_orders'])).toEqual([2, 3]);
  });

  it('closes an authenticated connection (error 103) once its token is revoked', async () => {
    const user = await api.register();
    const client = await connect(user.token);
    await client.subscribe(['user_orders']);
    expect((await api.post('/api/auth/logout', undefined, { token: user.token })).status).toBeLessThan(300);
    expect((await client.closed).code).toBe(1008);
    expect(client.messages.at(-1)).toMatchObject({ type: 'error', msg: { code: 103 } });
  });

  it('pings every interval; the client answers with pongs and stays connected', async () => {
    const client = await connect();
    await client.waitFor(() => client.pings >= 3, 'three pings', 5000);
    expect(client.ws.readyState).toBe(WebSocket.OPEN);
  });
});

describe('commands and their errors', () => {
  it('answers subscribe, list_subscriptions and unsubscribe in Kalshi shapes', async () => {
    const [a, b] = [await markets.create(), await markets.create()];
    const user = await api.register();
    const client = await connect(user.token);
    const subscribed = await client.command('subscribe', { channels: ['orderbook_delta', 'ticker'], market_tickers: [a, b.toLowerCase()] }, 2);
    expect(subscribed).toEqual([
      { id: 1, type: 'subscribed', msg: { channel: 'orderbook_delta', sid: 1 } },
      { id: 1, type: 'subscribed', msg: { channel: 'ticker', sid: 2 } },
    ]);
    await client.waitFor(() => client.ofSid(1).length === 2, 'two snapshots');
    expect(client.ofSid(1).map((m) => [m.type, m.seq, m.msg.market_ticker, m.msg.yes, m.msg.no])).toEqual([
      ['orderbook_snapshot', 1, a, [], []],
      ['orderbook_snapshot', 2, b, [], []],
    ]);
    await client.subscribe(['user_orders']);
    const [listed] = await client.command('list_subscriptions');
    expect(listed).toEqual({
      id: 3,
      type: 'ok',
      msg: {
        subscriptions: [
          { sid: 1, channel: 'orderbook_delta', market_tickers: [a, b] },
          { sid: 2, channel: 'ticker', market_tickers: [a, b] },
          { sid: 3, channel: 'user_orders' },
        ],
      },
    });
    const unsubscribed = await client.command('unsubscribe', { sids: [1, 3] }, 2);
    expect(unsubscribed).toEqual([
      { id: 4, type: 'unsubscribed', sid: 1, msg: { sid: 1, channel: 'orderbook_delta' } },
      { id: 4, type: 'unsubscribed', sid: 3, msg: { sid: 3, channel: 'user_orders' } },
    ]);
    const [remaining] = await client.command('list_subscriptions', {});
    expect(remaining.msg.subscriptions).toEqual([{ sid: 2, channel: 'ticker', market_tickers: [a, b] }]);

    // Nothing more arrives for an ended subscription.
    await place(user.token, { ticker: a, side: 'yes', count: '1', price: '0.30' });
    await client.waitFor(() => client.ofSid(2).length === 1, 'a ticker');
    expect(client.ofSid(1).length).toBe(2);
  });

  it('answers every malformed command with an error and keeps the connection', async () => {
    const ticker = await markets.create();
    const client = await connect();
    const errorFor = async (frame: string | Buffer) => {
      const before = client.messages.length;
      client.sendRaw(frame);
      await client.waitFor(() => client.messages.length > before, `the reply to ${String(frame).slice(0, 40)}`);
      return client.messages[before];
    };
    expect(await errorFor('{not json')).toEqual({ type: 'error', msg: { code: 1, msg: expect.any(String) } });
    expect(await errorFor('[1, 2]')).toMatchObject({ type: 'error', msg: { code: 1 } });
    expect(await errorFor('{"id": -1, "cmd": "list_subscriptions"}')).toMatchObject({ type: 'error', msg: { code: 1 } });
    expect(await errorFor('{"id": 7, "cmd": "launch"}')).toMatchObject({ id: 7, type: 'error', msg: { code: 5 } });
    expect(await errorFor('{"id": 8}')).toMatchObject({ id: 8, type: 'error', msg: { code: 5 } });
    expect(await errorFor('{"id": 9, "cmd": "subscribe"}')).toMatchObject({ id: 9, type: 'error', msg: { code: 2 } });
    expect(await errorFor('{"id": 10, "cmd": "subscribe", "params": {"channels": []}}')).toMatchObject({ id: 10, type: 'error', msg: { code: 3 } });
    expect(await errorFor('{"id": 11, "cmd": "subscribe", "params": {"channels": ["orderbook"]}}')).toMatchObject({ id: 11, type: 'error', msg: { code: 8 } });
    expect(await errorFor('{"id": 12, "cmd": "subscribe", "params": {"channels": ["orderbook_delta"]}}')).toMatchObject({ id: 12, type: 'error', msg: { code: 14 } });
    expect(await errorFor(`{"id": 13, "cmd": "subscribe", "params": {"channels": ["trade"], "market_tickers": ["${ticker}", "NO-SUCH-MARKET"]}}`)).toMatchObject({
      id: 13,
      type: 'error',
      msg: { code: 16, msg: "market 'NO-SUCH-MARKET' not found" },
    });
    expect(await errorFor('{"id": 14, "cmd": "subscribe", "params": {"channels": ["trade"], "market_tickers": "X"}}')).toMatchObject({ id: 14, type: 'error', msg: { code: 11 } });
    expect(await errorFor('{"id": 15, "cmd": "unsubscribe", "params": {}}')).toMatchObject({ id: 15, type: 'error', msg: { code: 4 } });
    expect(await errorFor('{"id": 16, "cmd": "unsubscribe", "params": {"sids": [42]}}')).toMatchObject({ id: 16, type: 'error', msg: { code: 7 } });
    expect(await errorFor('{"id": 17, "cmd": "subscribe", "params": {"channels": ["user_orders"]}}')).toMatchObject({ id: 17, type: 'error', msg: { code: 9 } });
    expect(await errorFor('{"id": 18, "cmd": "subscribe", "params": "trade"}')).toMatchObject({ id: 18, type: 'error', msg: { code: 11 } });
    // Over the command size limit (16 KiB): refused unread, the connection stays.
    expect(await errorFor(JSON.stringify({ id: 19, cmd: 'list_subscriptions', params: { pad: 'x'.repeat(20_000) } }))).toMatchObject({ type: 'error', msg: { code: 100 } });
    // Nothing was subscribed by the failed commands; the connection still works.
    const [listed] = await client.command('list_subscriptions');
    expect(listed.msg.subscriptions).toEqual([]);
    expect(await client.subscribe(['trade', 'ticker'], [ticker])).toEqual([1, 2]);
  });

  it('closes the connection (1009) on a frame above 1 MiB', async () => {
    const client = await connect();
    client.sendRaw(Buffer.alloc(1024 * 1024 + 10, 0x20));
    expect((await client.closed).code).toBe(1009);
  });

  it('refuses subscriptions beyond the per-connection limit', async () => {
    const ticker = await markets.create();
    const client = await connect();
    for (let i = 0; i < 33; i += 1) await client.command('subscribe', { channels: ['trade', 'ticker', 'orderbook_delta', 'trade', 'ticker'], market_ticker: ticker }, 3);
    const [refused] = await client.command('subscribe', { channels: ['trade', 'ticker', 'orderbook_delta'], market_ticker: ticker });
    expect(refused).toMatchObject({ type: 'error', msg: { code: 102 } });
    const tooMany = Array.from({ length: 101 }, (_, i) => `T${i}`);
    const [wide] = await client.command('subscribe', { channels: ['trade'], market_tickers: tooMany });
    expect(wide).toMatchObject({ type: 'error', msg: { code: 102 } });
  });
});

/** Every page of a cursor collection. */
async function walk(path: string, key: string, token?: string): Promise<any[]> {
  const items: any[] = [];
  let cursor: string | null = '';
  while (cursor !== null) {
    const separator = path.includes('?') ? '&' : '?';
    const response: ApiResponse = await api.get(cursor === '' ? path : `${path}${separator}cursor=${encodeURIComponent(cursor)}`, { token });
    expect(response.status).toBe(200);
    items.push(...response.body[key]);
    cursor = response.body.cursor;
  }
  return items;
}

describe('channel orderbook_delta: the snapshot plus the deltas equal the REST order book', () => {
  const operation = fc.oneof(
    {
      weight: 8,
      arbitrary: fc.record({
        kind: fc.constant('place' as const),
        trader: fc.nat(3),
        side: fc.constantFrom('yes', 'no'),
        action: fc.constantFrom('buy', 'buy', 'buy', 'sell'),
        price: fc.integer({ min: 40, max: 62 }),
        count: fc.integer({ min: 1, max: 6 }),
        half: fc.boolean(),
        tif: fc.constantFrom('GTC', 'GTC', 'GTC', 'IOC', 'FOK'),
      }),
    },
    { weight: 1, arbitrary: fc.record({ kind: fc.constant('cancel' as const), pick: fc.nat() }) },
    { weight: 1, arbitrary: fc.record({ kind: fc.constant('decrease' as const), pick: fc.nat() }) },
  );

  it('after random orders, cancels, decreases and fills, with subscribers joining before and during them', async () => {
    const traders = await Promise.all(Array.from({ length: 4 }, () => api.register()));
    await fc.assert(
      fc.asyncProperty(fc.array(operation, { minLength: 50, maxLength: 100 }), async (ops) => {
        const ticker = await markets.create();
        const early = await connect();
        const [bookSid, tradeSid, tickerSid] = await early.subscribe(['orderbook_delta', 'trade', 'ticker'], [ticker]);
        const placed: Array<{ id: string; token: string }> = [];
        let late: { client: FeedClient; sid: number } | undefined;
        const run = async (op: (typeof ops)[number]) => {
          if (op.kind === 'place') {
            const token = traders[op.trader]!.token;
            const body = { ticker, side: op.side, action: op.action, price: `0.${op.price}`, count: op.half ? `${op.count}.5` : String(op.count), time_in_force: op.tif };
            const response = await api.post('/api/portfolio/orders', body, { token });
            // Sells without the shares are refused (400): part of the random walk.
            expect(response.status === 201 || response.status === 400, JSON.stringify(response.body)).toBe(true);
            if (response.status === 201) placed.push({ id: response.body.order.order_id, token });
          } else if (placed.length > 0) {
            const target = placed[op.pick % placed.length]!;
            const response: ApiResponse =
              op.kind === 'cancel'
                ? await api.delete(`/api/portfolio/orders/${target.id}`, { token: target.token })
                : await api.post(`/api/portfolio/orders/${target.id}/decrease`, { count: '0.5' }, { token: target.token });
            expect([200, 204, 400, 409]).toContain(response.status);
          }
        };
        // Four at a time, so that placements race in the database; a second subscriber joins half-way,
        // while operations are in flight.
        for (let i = 0; i < ops.length; i += 4) {
          const chunk = ops.slice(i, i + 4).map(run);
          if (!late && i >= ops.length / 2) {
            const client = await connect();
            const [sid] = await client.subscribe(['orderbook_delta'], [ticker]);
            late = { client, sid: sid! };
          }
          await Promise.all(chunk);
        }
        await expectBookInSync(early, bookSid!, ticker);
        await expectBookInSync(late!.client, late!.sid, ticker);

        // Every trade of the market, once, in the tape's order; the last ticker is the market now.
        const tape = (await walk(`/api/markets/trades?ticker=${ticker}`, 'trades')).reverse();
        await early.waitFor(() => early.ofSid(tradeSid).length === tape.length, 'every trade').catch(() => undefined);
        expect(early.ofSid(tradeSid).map((m) => m.msg.trade_id)).toEqual(tape.map((t) => t.trade_id));
        expect(early.ofSid(tradeSid).map((m) => [m.msg.yes_price, m.msg.no_price, m.msg.count, m.msg.taker_side])).toEqual(
          tape.map((t) => [t.yes_price, t.no_price, t.count, t.taker_side]),
        );
        expect(seqGaps(early.ofSid(tradeSid))).toEqual([]);
        const tickers = early.ofSid(tickerSid);
        expect(seqGaps(tickers)).toEqual([]);
        const market = (await api.get(`/api/markets/${ticker}`)).body.market;
        const book = await restBook(ticker);
        if (tickers.length > 0) {
          expect(tickers.at(-1).msg).toMatchObject({
            market_ticker: ticker,
            price: market.lastYesPrice,
            volume: market.volume,
            open_interest: market.openInterest,
            yes_bid: book.yes[0]?.[0] ?? null,
            yes_ask: book.no[0] ? (1 - Number(book.no[0][0])).toFixed(2) : null,
          });
        }
        // Consecutive tickers differ (unchanged ones are not sent).
        for (let i = 1; i < tickers.length; i += 1) expect({ ...tickers[i].msg, ts: 0 }).not.toEqual({ ...tickers[i - 1].msg, ts: 0 });
        early.close();
        late!.client.close();
      }),
      { numRuns: 3, endOnFailure: true },
    );
  }, 120_000);
});

describe('private channels fill and user_orders', () => {
  it('carry the cancels of a market the catalogue closes, once its transaction has committed', async () => {
    const ticker = await markets.create();
    const owner = await api.register();
    const feed = await connect(owner.token);
    const [orders] = await feed.subscribe(['user_orders']);
    const resting = await place(owner.token, { ticker, side: 'yes', count: '2', price: '0.35' });
    expect((await api.post(`/api/admin/markets/${ticker}/close`, undefined, { token: admin })).status).toBe(200);
    // Nothing else happens on this market afterwards: only the close's own notification can bring the cancel.
    await feed.waitFor(() => feed.ofSid(orders).some((m) => m.msg.order_id === resting.order_id && m.msg.status === 'CANCELLED'), 'the close cancel', 5000);
    expect(seqGaps(feed.ofSid(orders))).toEqual([]);
  });

  it("carry every change of the caller's orders and fills, every kind of cancel included, and nothing of other accounts", async () => {
    const [m1, m2] = [await markets.create(), await markets.create()];
    const [a, b, c] = await Promise.all([api.register(), api.register(), api.register()]);
    const feedA = await connect(a.token);
    const feedB = await connect(b.token);
    const [ordersA, fillsA] = await feedA.subscribe(['user_orders', 'fill']);
    const [ordersB, fillsB] = await feedB.subscribe(['user_orders', 'fill']);
    // A filtered subscription: only m2.
    const [ordersA2] = await feedA.subscribe(['user_orders'], [m2]);
    const idsOf = { a: new Set<string>(), b: new Set<string>(), c: new Set<string>() };
    const put = async (who: 'a' | 'b' | 'c', body: Record<string, unknown>) => {
      const order = await place({ a, b, c }[who].token, body);
      idsOf[who].add(order.order_id);
      return order;
    };

    // A rests a bid; B and C take parts of it (fills on both sides); A decreases, then cancels the rest.
    const bid = await put('a', { ticker: m1, side: 'yes', count: '10', price: '0.50', client_order_id: 'a-bid' });
    await put('b', { ticker: m1, side: 'no', count: '6', price: '0.55' });
    await put('c', { ticker: m1, side: 'no', count: '2', price: '0.50' });
    expect((await api.post(`/api/portfolio/orders/${bid.order_id}/decrease`, { count: '1' }, { token: a.token })).status).toBe(200);
    expect((await api.delete(`/api/portfolio/orders/${bid.order_id}`, { token: a.token })).status).toBe(200);
    // Expiry: cancelled by the sweep within a couple of seconds.
    const expiring = await put('a', { ticker: m1, side: 'yes', count: '1', price: '0.20', expiration_ts: new Date(Date.now() + 1500).toISOString() });
    // Self-trade prevention: A's own resting bid is cancelled by A's crossing order.
    const own = await put('a', { ticker: m1, side: 'yes', count: '2', price: '0.40' });
    await put('a', { ticker: m1, side: 'no', count: '1', price: '0.65', time_in_force: 'IOC' });
    // Settlement: A's resting order on m2 is cancelled when m2 resolves.
    const settled = await put('a', { ticker: m2, side: 'no', count: '3', price: '0.30' });
    await feedA.waitFor(() => feedA.ofSid(ordersA).some((m) => m.msg.order_id === expiring.order_id && m.msg.status === 'CANCELLED'), 'the expiry cancel', 10_000);
    expect((await api.post(`/api/admin/markets/${m2}/resolve`, { result: 'no' }, { token: admin })).status).toBe(200);
    // Heartbeat: A starts an order session and lets it expire (1 s): its resting orders are cancelled.
    const session = await put('a', { ticker: m1, side: 'yes', count: '1', price: '0.10' });
    expect((await api.post('/api/portfolio/heartbeat', {}, { token: a.token })).status).toBe(200);
    await feedA.waitFor(() => feedA.ofSid(ordersA).some((m) => m.msg.order_id === session.order_id && m.msg.status === 'CANCELLED'), 'the heartbeat cancel', 10_000);

    // Each account's final order records and fills, from REST, are what the feed said last.
    const restOrders = async (token: string) => [...(await walk(`/api/portfolio/orders?ticker=${m1}`, 'orders', token)), ...(await walk(`/api/portfolio/orders?ticker=${m2}`, 'orders', token))];
    for (const [who, feed, ordersSid, fillsSid] of [
      ['a', feedA, ordersA, fillsA],
      ['b', feedB, ordersB, fillsB],
    ] as const) {
      const token = { a, b }[who].token;
      const orders = await restOrders(token);
      const fills = await walk('/api/portfolio/fills', 'fills', token);
      await feed.waitFor(
        () => feed.ofSid(fillsSid).length === fills.length && orders.every((o) => feed.ofSid(ordersSid).some((m) => JSON.stringify(m.msg) === JSON.stringify(o))),
        `${who}'s final orders and fills`,
      );
      const updates = feed.ofSid(ordersSid);
      expect(updates.every((m) => idsOf[who].has(m.msg.order_id)), 'only own orders').toBe(true);
      expect(seqGaps(updates)).toEqual([]);
      for (const order of orders) expect(updates.filter((m) => m.msg.order_id === order.order_id).at(-1).msg).toEqual(order);
      const received = feed.ofSid(fillsSid);
      expect(seqGaps(received)).toEqual([]);
      expect(received.every((m) => idsOf[who].has(m.msg.order_id)), 'only own fills').toBe(true);
      expect(received.map((m) => [m.msg.fill_id, m.msg.order_id, m.msg.side, m.msg.action, m.msg.price, m.msg.count, m.msg.is_taker]).sort()).toEqual(
        fills.map((f) => [f.fill_id, f.order_id, f.side, f.action, f.price, f.count, f.role === 'taker']).sort(),
      );
    }

    // A saw its bid go OPEN -> PARTIAL (6) -> PARTIAL (8) -> decreased -> CANCELLED, with client_order_id on its fills.
    const history = feedA.ofSid(ordersA).filter((m) => m.msg.order_id === bid.order_id).map((m) => [m.msg.status, m.msg.fill_count, m.msg.remaining_count]);
    expect(history).toEqual([
      ['OPEN', '0', '10'],
      ['PARTIAL', '6', '4'],
      ['PARTIAL', '8', '2'],
      ['PARTIAL', '8', '1'],
      ['CANCELLED', '8', '0'],
    ]);
    expect(feedA.ofSid(fillsA).map((m) => [m.msg.client_order_id, m.msg.count, m.msg.is_taker, m.msg.price, m.msg.market_ticker])).toEqual([
      ['a-bid', '6', false, '0.50', m1],
      ['a-bid', '2', false, '0.50', m1],
    ]);
    // Every kind of cancel reached A: self-trade, expiry, settlement, heartbeat.
    for (const id of [own.order_id, expiring.order_id, settled.order_id, session.order_id]) {
      expect(feedA.ofSid(ordersA).filter((m) => m.msg.order_id === id).at(-1).msg.status).toBe('CANCELLED');
    }
    // The m2-only subscription saw m2's order and nothing else.
    expect(feedA.ofSid(ordersA2).map((m) => [m.msg.order_id, m.msg.status])).toEqual([
      [settled.order_id, 'OPEN'],
      [settled.order_id, 'CANCELLED'],
    ]);
    // B never saw A's or C's orders (checked above); C's orders reached nobody.
    for (const id of idsOf.c) expect([...feedA.messages, ...feedB.messages].some((m) => m.msg?.order_id === id)).toBe(false);
  }, 60_000);
});

describe('the AsyncAPI document', () => {
  it('is a valid AsyncAPI 3.0 document, served as JSON at /asyncapi.json', async () => {
    // Fetched first: the parse can take longer than the keep-alive timeout, after which the client's idle
    // socket may be one the server is closing.
    const served = await api.get('/asyncapi.json');
    const parsed = await new Parser().parse(readFileSync(ASYNCAPI_PATH, 'utf8'));
    expect(parsed.diagnostics.filter((d) => (d.severity as number) === 0).map((d) => `${d.code}: ${d.message} at ${d.path.join('.')}`)).toEqual([]);
    expect(parsed.document?.version()).toBe('3.0.0');
    expect(served.status).toBe(200);
    expect(served.body).toEqual(asyncapiDocument);
    // Every example of every message validates against its own payload schema.
    for (const [name, message] of Object.entries<any>(asyncapiDocument.components.messages)) {
      const schema = message.payload.$ref.split('/').at(-1);
      for (const example of message.examples ?? []) {
        const validate = asyncapi.validator(schema);
        expect(validate(example.payload), `${name}: ${JSON.stringify(validate.errors)}`).toBe(true);
      }
    }
  });

  it('describes every message type the tests received (each one validated on receipt)', () => {
    expect([...asyncapi.seen.keys()].sort()).toEqual(
      ['authenticated', 'error', 'fill', 'ok', 'orderbook_delta', 'orderbook_snapshot', 'subscribed', 'ticker', 'trade', 'unsubscribed', 'user_order'].sort(),
    );
  });
});

describe('the listener connection', () => {
  it('reconnects after losing its connection and delivers what was committed meanwhile, without a gap', async () => {
    const ticker = await markets.create();
    const [maker, taker] = await Promise.all([api.register(), api.register()]);
    const client = await connect();
    const [bookSid, tradeSid] = await client.subscribe(['orderbook_delta', 'trade'], [ticker]);
    const order = (token: string, i: number) =>
      place(token, token === maker.token ? { ticker, side: 'yes', price: `0.${30 + (i % 10)}`, count: '2' } : { ticker, side: 'no', price: '0.75', count: '1', time_in_force: 'IOC' });
    for (let i = 0; i < 4; i += 1) await order(i % 2 ? taker.token : maker.token, i);
    await client.waitFor(() => client.ofSid(tradeSid).length === 2, 'the first trades');
    const terminated = await service.db.raw(
      "select pg_terminate_backend(pid) as ok from pg_stat_activity where application_name = 'dots-feed-listener' and datname = current_database()",
    );
    expect(terminated.rows.length).toBe(1);
    // Committed while the listener is away (it reconnects after 100 ms): no notification reaches it.
    for (let i = 4; i < 10; i += 1) await order(i % 2 ? taker.token : maker.token, i);
    await expectBookInSync(client, bookSid!, ticker);
    await client.waitFor(() => client.ofSid(tradeSid).length === 5, 'every trade');
    expect(seqGaps(client.ofSid(tradeSid))).toEqual([]);
  });
});

describe('the outbox', () => {
  it("hands the committing process's feed its records as every process reads them back", async () => {
    const feed = service.services.feed;
    const handed: FeedRecord[] = [];
    const committed = feed.committed.bind(feed);
    feed.committed = (records) => {
      handed.push(...records);
      committed(records);
    };
    try {
      const ticker = await markets.create();
      const [maker, taker] = [await api.register(), await api.register()];
      await place(maker.token, { ticker, side: 'yes', price: '0.40', count: '2' });
      await place(taker.token, { ticker, side: 'no', price: '0.70', count: '1' });
    } finally {
      feed.committed = committed;
    }
    // Both placements (a resting order, then a trade), each one record of its own transaction.
    expect(handed).toHaveLength(2);
    const marketId = handed[0]!.marketId;
    const connection = (await service.db.client.acquireConnection()) as SqlClient;
    try {
      const stored = await readFeedEvents(connection, [[marketId, 0]], 10);
      expect(handed).toEqual(stored);
    } finally {
      await service.db.client.releaseConnection(connection);
    }
  });

  it('is pruned by age without disturbing the sequence of any market', async () => {
    const ticker = await markets.create();
    const trader = await api.register();
    const client = await connect();
    const [sid] = await client.subscribe(['orderbook_delta'], [ticker]);
    await place(trader.token, { ticker, side: 'yes', price: '0.20', count: '1' });
    // Delivered before it is pruned (a record pruned before any listener read it is a gap: see relay.ts).
    await expectBookInSync(client, sid!, ticker);
    const before = await service.db('feed_sequences').join('markets', 'markets.id', 'feed_sequences.market_id').where('markets.ticker', ticker).first('seq');
    expect(await pruneFeedEvents(service.db, 0)).toBeGreaterThan(0);
    expect((await service.db('feed_events').count('* as n'))[0]!.n).toBe('0');
    await place(trader.token, { ticker, side: 'yes', price: '0.21', count: '1' });
    const after = await service.db('feed_sequences').join('markets', 'markets.id', 'feed_sequences.market_id').where('markets.ticker', ticker).first('seq');
    expect(Number(after.seq)).toBe(Number(before.seq) + 1);
    await expectBookInSync(client, sid!, ticker);
  });
});

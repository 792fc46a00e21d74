import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { exitOf, ProcessCluster, workersThatServed } from '../support/processes.js';
import { applyBook, FeedClient, Markets, seqGaps } from '../support/realtime.js';
import { createTestDatabase, type ApiClient } from '../support/service.js';

/**
 * The feed across service processes on one database: what is committed through process A reaches the
 * subscribers of process B (and of A), after the commit, in commit order per market, so that B's
 * snapshot plus deltas equal the book whichever process answers; and a process stops cleanly (exit 0)
 * with WebSocket connections open. The same with the two HTTP workers of one service (WEB_CONCURRENCY=2) in
 * place of the two processes: subscribers and placements then land on either worker.
 */

const ADMIN = { ADMIN_EMAIL: 'realtime-processes-admin@dots.local', ADMIN_PASSWORD: 'realtime-processes-password' };

describe.each([
  { workers: 1, label: 'service processes' },
  { workers: 2, label: 'the workers of one service, behind one port' },
])('the feed across $label', ({ workers }) => {
  let cluster: ProcessCluster;

  beforeAll(async () => {
    cluster = new ProcessCluster(await createTestDatabase(), ADMIN, workers);
  });
  afterAll(() => cluster.killAll());
  const start = () => cluster.start();

  it("delivers process A's commits to subscribers of process B, in order, consistent with the book", async () => {
    const [a, b] = [await start(), await start()];
    const adminToken = (await a.api.post('/api/auth/login', { email: ADMIN.ADMIN_EMAIL, password: ADMIN.ADMIN_PASSWORD })).body.token;
    const catalogue = new Markets(a.api, () => adminToken, 'RTP');
    const tickers = [await catalogue.create(), await catalogue.create()];
    const traders = await Promise.all(Array.from({ length: 6 }, (_, i) => (i % 2 ? b.api : a.api).register()));

    // Subscribers on B: both books, trades; trader 0's orders and fills. And one on A, for comparison.
    const onB = await FeedClient.connect(b.process.url, traders[0]!.token);
    const bookSids = [(await onB.subscribe(['orderbook_delta'], [tickers[0]!]))[0]!, (await onB.subscribe(['orderbook_delta'], [tickers[1]!]))[0]!];
    const [tradeSid, ordersSid, fillsSid] = await onB.subscribe(['trade', 'user_orders', 'fill']);
    const onA = await FeedClient.connect(a.process.url);
    const [bookSidA] = await onA.subscribe(['orderbook_delta'], [tickers[0]!]);

    // Orders through A only first: whatever B's subscribers receive came from A's commits.
    const order = (i: number) => ({
      ticker: tickers[i % 2]!,
      side: (i >> 1) % 2 ? 'no' : 'yes',
      price: `0.${40 + ((i * 7) % 21)}`,
      count: String(1 + (i % 5)),
    });
    const placedByTrader0: string[] = [];
    const run = async (api: ApiClient, t: number, k: number) => {
      const response = await api.post('/api/portfolio/orders', order(t * 100 + k), { token: traders[t]!.token });
      expect(response.status).toBe(201);
      if (t === 0) placedByTrader0.push(response.body.order.order_id);
    };
    await Promise.all(traders.map((_, t) => (async () => { for (let k = 0; k < 8; k += 1) await run(a.api, t, k); })()));
    await onB.waitFor(() => onB.ofSid(ordersSid).length >= placedByTrader0.length, "trader 0's orders on B");
    // Then through both processes at once.
    await Promise.all(traders.map((_, t) => (async () => { for (let k = 8; k < 16; k += 1) await run(t % 2 ? b.api : a.api, t, k); })()));

    for (const [i, ticker] of tickers.entries()) {
      const book = (await a.api.get(`/api/markets/${ticker}/orderbook`)).body.orderbook;
      expect((await b.api.get(`/api/markets/${ticker}/orderbook`)).body.orderbook).toEqual(book);
      await onB.waitFor(() => JSON.stringify(applyBook(onB.ofSid(bookSids[i]))) === JSON.stringify(book), `B's book of ${ticker}`).catch(() => undefined);
      expect(applyBook(onB.ofSid(bookSids[i]))).toEqual(book);
      expect(seqGaps(onB.ofSid(bookSids[i]))).toEqual([]);
      if (i === 0) {
        await onA.waitFor(() => JSON.stringify(applyBook(onA.ofSid(bookSidA))) === JSON.stringify(book), `A's book of ${ticker}`).catch(() => undefined);
        expect(applyBook(onA.ofSid(bookSidA))).toEqual(book);
        // Both processes sent the same deltas, in the same (commit) order.
        const deltas = (client: FeedClient, sid: number) => client.ofSid(sid).filter((m) => m.type === 'orderbook_delta').map((m) => [m.msg.side, m.msg.price, m.msg.delta, m.msg.ts]);
        expect(deltas(onB, bookSids[0]!)).toEqual(deltas(onA, bookSidA!));
      }
    }
    // Every trade once, per market in the tape's order; trader 0's orders and fills, all of them.
    const tape = (await a.api.get('/api/markets/trades?limit=100')).body.trades.reverse();
    expect(tape.length).toBeGreaterThan(0);
    await onB.waitFor(() => onB.ofSid(tradeSid).length === tape.length, 'every trade on B');
    for (const ticker of tickers) {
      expect(onB.ofSid(tradeSid).filter((m) => m.msg.market_ticker === ticker).map((m) => m.msg.trade_id)).toEqual(
        tape.filter((t: any) => t.ticker === ticker).map((t: any) => t.trade_id),
      );
    }
    expect(seqGaps(onB.ofSid(tradeSid))).toEqual([]);
    const orders = (await b.api.get('/api/portfolio/orders?limit=100', { token: traders[0]!.token })).body.orders;
    for (const o of orders) {
      await onB.waitFor(() => onB.ofSid(ordersSid).some((m) => JSON.stringify(m.msg) === JSON.stringify(o)), `order ${o.order_id} as REST shows it`);
    }
    expect(new Set(onB.ofSid(ordersSid).map((m) => m.msg.order_id))).toEqual(new Set(placedByTrader0));
    const fills = (await b.api.get('/api/portfolio/fills?limit=100', { token: traders[0]!.token })).body.fills;
    await onB.waitFor(() => onB.ofSid(fillsSid).length === fills.length, "trader 0's fills");
    expect(seqGaps(onB.ofSid(ordersSid))).toEqual([]);
    expect(onB.problems).toEqual([]);
    expect(onA.problems).toEqual([]);
    if (workers > 1) expect(workersThatServed(a.process.output()).size).toBe(workers);

    // SIGTERM with connections open: the clients are told and closed, the process exits 0.
    for (const { process } of [a, b]) process.child.kill('SIGTERM');
    expect(await Promise.all([a, b].map(({ process }) => exitOf(process.child)))).toEqual([0, 0]);
    expect((await onB.closed).code).toBe(1001);
    expect(onB.messages.at(-1)).toMatchObject({ type: 'error', msg: { code: 104 } });
  }, 120_000);
});

import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RunningService } from '../../src/server.js';
import type { ApiClient } from '../support/service.js';
import { applyBook, FeedClient, Markets, seqGaps, startFeedService } from '../support/realtime.js';

/**
 * A consumer that stops reading is cut off (an error message, then close 1008) once what waits to be sent
 * to it passes the bound, while the other connections go on receiving everything, without a gap.
 */

const ADMIN = { email: 'backpressure-admin@dots.local', password: 'backpressure-password' };
const MAX_BUFFERED = 256 * 1024;
const SLOW_SUBSCRIPTIONS = 300;

let service: RunningService;
let api: ApiClient;
let admin: string;

beforeAll(async () => {
  ({ service, api } = await startFeedService(
    { ADMIN_EMAIL: ADMIN.email, ADMIN_PASSWORD: ADMIN.password, STARTING_BALANCE: '1000000' },
    { realtime: { maxBufferedBytes: MAX_BUFFERED, closeGraceMs: 30_000 }, feed: { limits: { maxSubscriptions: SLOW_SUBSCRIPTIONS } } },
  ));
  admin = (await api.post('/api/auth/login', ADMIN)).body.token;
});
afterAll(() => service.stop());

describe('a slow consumer', () => {
  it('is disconnected with an error message while the others continue', async () => {
    const ticker = await new Markets(api, () => admin, 'RTBP').create();
    const [maker, taker] = await Promise.all([api.register(), api.register()]);
    const fast = await FeedClient.connect(service.url);
    const [bookSid, tradeSid] = await fast.subscribe(['orderbook_delta', 'trade'], [ticker]);
    const slow = await FeedClient.connect(service.url);
    // Many subscriptions of one market: every order multiplies into SLOW_SUBSCRIPTIONS messages.
    for (let i = 0; i < SLOW_SUBSCRIPTIONS; i += 1) await slow.command('subscribe', { channels: ['orderbook_delta'], market_ticker: ticker });
    expect(service.services.feed.hub.size).toBe(SLOW_SUBSCRIPTIONS + 2);
    // The slow client stops reading its socket.
    (slow.ws as unknown as { _socket: { pause(): void } })._socket.pause();

    let placed = 0;
    const cutOff = () => service.services.feed.hub.size === 2;
    const trader = async (k: number) => {
      for (let i = 0; placed < 3000 && !cutOff(); i += 1) {
        placed += 1;
        // Resting bids at 0.01..0.30 and, one in four, a sell of NO that takes one (a trade).
        const crossing = i % 4 === 3;
        const body = crossing
          ? { ticker, side: 'no', action: 'buy', price: '0.99', count: '1', time_in_force: 'IOC' }
          : { ticker, side: 'yes', action: 'buy', price: `0.${String(1 + ((i * 7 + k) % 30)).padStart(2, '0')}`, count: '1' };
        const response = await api.post('/api/portfolio/orders', body, { token: crossing ? taker.token : maker.token });
        expect(response.status).toBe(201);
      }
    };
    await Promise.all(Array.from({ length: 6 }, (_, k) => trader(k)));
    expect(cutOff(), `still connected after ${placed} orders`).toBe(true);

    // Others continue: a few more orders reach the fast client.
    for (let i = 0; i < 5; i += 1) await api.post('/api/portfolio/orders', { ticker, side: 'yes', price: '0.05', count: '2' }, { token: maker.token });
    const rest = (await api.get(`/api/markets/${ticker}/orderbook`)).body.orderbook;
    await fast.waitFor(() => JSON.stringify(applyBook(fast.ofSid(bookSid))) === JSON.stringify(rest), 'the fast client to catch up', 20_000);
    expect(applyBook(fast.ofSid(bookSid))).toEqual(rest);
    expect(seqGaps(fast.ofSid(bookSid))).toEqual([]);
    expect(seqGaps(fast.ofSid(tradeSid))).toEqual([]);
    expect(fast.ofSid(tradeSid).length).toBeGreaterThan(0);

    // The slow client, reading again, finds the error message at the end of what it was sent, then the close.
    (slow.ws as unknown as { _socket: { resume(): void } })._socket.resume();
    const closed = await slow.closed;
    expect(closed.code).toBe(1008);
    expect(slow.messages.at(-1)).toEqual({ type: 'error', msg: { code: 101, msg: expect.stringContaining('slow consumer') } });
    expect(slow.problems).toEqual([]);
    expect(fast.problems).toEqual([]);
    fast.close();
  }, 120_000);
});

/* eslint max-lines: ["error", { "max": 550, "skipBlankLines": true, "skipComments": true }] -- its cases share one running service (an embedded PostgreSQL) and its fixtures: a split would start another */
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { checkTradingInvariants } from '../support/invariants.js';
import { TestService, type ApiResponse } from '../support/service.js';

/**
 * Order sessions over HTTP: every heartbeat path and transition, the expiry of sessions (lazily, and by the
 * sweep with a short timeout), order scoring on every path with each condition both true and false, the
 * batch limits, and the fee-free profile on order payloads. Every response is validated against the
 * OpenAPI document by TestService.
 *
 * Two services: `api` with a 2-second session timeout and the expiry sweep disabled (so that an expired
 * session stays unswept until a call finds it), and `swept` with a 1-second timeout swept every second.
 */

const ADMIN = { email: 'sessions-admin@dots.local', password: 'sessions-password' };
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;
const HEARTBEAT_ALIASES = ['/v1/heartbeats', '/heartbeats', '/api/heartbeats', '/api/clob/heartbeats', '/api/clob/v1/heartbeats'];
const SINGLE_PATHS = ['/api/clob/order-scoring', '/api/order-scoring', '/order-scoring'];
const BATCH_PATHS = ['/api/clob/orders-scoring', '/orders-scoring', '/api/orders-scoring'];
const FEE_FIELDS = ['builder_maker_fee_bps', 'builder_taker_fee_bps', 'fee_rate_bps', 'platform_maker_fee_bps', 'platform_taker_fee_bps', 'feeRateBps'];

let api: TestService;
let admin: string;
let marketCounter = 0;

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

beforeAll(async () => {
  api = await TestService.start({ ADMIN_EMAIL: ADMIN.email, ADMIN_PASSWORD: ADMIN.password, ORDER_HEARTBEAT_TIMEOUT_SECS: '2', ORDER_HEARTBEAT_SWEEP_INTERVAL_SECS: '0' });
  admin = (await api.post('/api/auth/login', ADMIN)).body.token;
  await createEvent(api, admin, 'SESS');
});
afterAll(() => api.stop());

async function createEvent(service: TestService, token: string, prefix: string): Promise<void> {
  expect((await service.post('/api/admin/series', { ticker: prefix, title: `${prefix} series`, category: 'economics', frequency: 'daily' }, { token })).status).toBe(201);
  const event = { event_ticker: `${prefix}-E`, series_ticker: prefix, title: `${prefix} event`, strike_date: '2031-01-01T00:00:00Z' };
  expect((await service.post('/api/admin/events', event, { token })).status).toBe(201);
}

/** A new ACTIVE market of the event `prefix`-E, with rewards when given. */
async function newMarket(rewards?: { rewards_min_size: string; rewards_max_spread: string }, service = api, token = admin, prefix = 'SESS'): Promise<string> {
  marketCounter += 1;
  const ticker = `${prefix}-E-M${marketCounter}`;
  const response = await service.post('/api/admin/markets', { ticker, event_ticker: `${prefix}-E`, title: `Market ${marketCounter}`, ...rewards }, { token });
  expect(response.status).toBe(201);
  return ticker;
}

const account = async (service = api): Promise<string> => (await service.account()).token;

async function order(token: string, body: Record<string, unknown>, service = api): Promise<Record<string, any>> {
  const response = await service.post('/api/portfolio/orders', body, { token });
  if (response.status !== 201) throw new Error(`placing ${JSON.stringify(body)}: ${response.status} ${JSON.stringify(response.body)}`);
  return response.body.order;
}

async function read(path: string, token: string, service = api): Promise<any> {
  const response = await service.get(path, { token });
  if (response.status !== 200) throw new Error(`GET ${path}: ${response.status} ${JSON.stringify(response.body)}`);
  return response.body;
}

const heartbeat = (token: string | undefined, body?: unknown, path = '/api/portfolio/heartbeat', service = api): Promise<ApiResponse> =>
  service.request('POST', path, { token, body });
const status = (token: string, service = api) => read('/api/portfolio/order-scoring/status', token, service);

/** Waits until the session's `expires_at` has passed. */
async function outlive(session: { expires_at: string }): Promise<void> {
  const wait = Date.parse(session.expires_at) - Date.now() + 150;
  if (wait > 0) await sleep(wait);
}

const scoring = async (token: string, id: string, path = '/api/clob/order-scoring', name = 'order_id'): Promise<boolean> => {
  const response = await api.get(`${path}?${name}=${encodeURIComponent(id)}`, { token });
  expect(response.status).toBe(200);
  return response.body.scoring;
};

describe('POST /api/portfolio/heartbeat: the heartbeat table', () => {
  it('starts a session without an id, and renews it with an omitted, null or empty id and with its own id', async () => {
    const trader = await account();
    const first = await heartbeat(trader);
    expect(first.status).toBe(200);
    const session = first.body;
    expect(session).toMatchObject({ status: 'active', timeout_seconds: 2 });
    expect(session.heartbeat_id).toMatch(UUID);
    expect(Date.parse(session.expires_at) - Date.parse(session.last_seen_at)).toBe(2000);

    let previous = session;
    for (const body of [undefined, {}, { heartbeat_id: null }, { heartbeat_id: '' }, { heartbeat_id: session.heartbeat_id }, { heartbeat_id: session.heartbeat_id.toUpperCase() }]) {
      await sleep(5);
      const renewed = await heartbeat(trader, body);
      expect(renewed.status, JSON.stringify(body)).toBe(200);
      expect(renewed.body.heartbeat_id).toBe(session.heartbeat_id);
      // last_seen_at and expires_at move forward; expires_at is always last_seen_at + the timeout.
      expect(Date.parse(renewed.body.last_seen_at)).toBeGreaterThan(Date.parse(previous.last_seen_at));
      expect(Date.parse(renewed.body.expires_at) - Date.parse(renewed.body.last_seen_at)).toBe(2000);
      previous = renewed.body;
    }
    const shown = (await status(trader)).heartbeat;
    expect(shown).toMatchObject({ heartbeat_id: session.heartbeat_id, active: true, last_seen_at: previous.last_seen_at, expires_at: previous.expires_at, cancelled_at: null, cancelled_count: 0 });
  });

  it('refuses an unknown, malformed or other account\'s id with 400 and changes nothing', async () => {
    const trader = await account();
    const other = await account();
    const own = (await heartbeat(trader)).body;
    const others = (await heartbeat(other)).body;
    for (const id of [randomUUID(), 'not-a-session', others.heartbeat_id]) {
      const refused = await heartbeat(trader, { heartbeat_id: id });
      expect(refused.status, id).toBe(400);
      expect(refused.body.error.code).toBe('invalid_request');
      expect(refused.body.error.message).toMatch(/names no order session/);
    }
    // Neither session moved.
    expect((await status(trader)).heartbeat).toMatchObject({ heartbeat_id: own.heartbeat_id, last_seen_at: own.last_seen_at, active: true });
    expect((await status(other)).heartbeat).toMatchObject({ heartbeat_id: others.heartbeat_id, last_seen_at: others.last_seen_at, active: true });
  });

  it('refuses the id of an expired session with 409, having cancelled its resting orders, and starts a new session on an empty id', async () => {
    const ticker = await newMarket();
    const trader = await account();
    const orders = [await order(trader, { ticker, side: 'yes', count: '10', price: '0.40' }), await order(trader, { ticker, side: 'no', count: '4', price: '0.30' })];
    const session = (await heartbeat(trader)).body;
    await outlive(session);

    // No sweep runs on this service: the call finds the session past its expiry and expires it first.
    const refused = await heartbeat(trader, { heartbeat_id: session.heartbeat_id });
    expect(refused.status).toBe(409);
    expect(refused.body.error.code).toBe('conflict');
    expect(refused.body.error.message).toMatch(/expired/);
    for (const placed of orders) {
      expect((await read(`/api/portfolio/orders/${placed.order_id}`, trader))).toMatchObject({ status: 'CANCELLED', remaining_count: '0' });
    }
    expect(await read('/api/portfolio/balance', trader)).toEqual({ balance: '1000.00', reserved: '0.00', available: '1000.00' });
    const expired = await status(trader);
    expect(expired).toMatchObject({ requires_heartbeat: true, heartbeat_active: false, order_scoring_enabled: false, open_orders: 0 });
    expect(expired.heartbeat).toMatchObject({ heartbeat_id: session.heartbeat_id, active: false, cancelled_count: 2, seconds_until_expiry: 0, expires_at: session.expires_at });
    expect(Date.parse(expired.heartbeat.cancelled_at)).toBeGreaterThanOrEqual(Date.parse(session.expires_at));

    // Again: still 409, and nothing changes.
    expect((await heartbeat(trader, { heartbeat_id: session.heartbeat_id })).status).toBe(409);
    expect((await status(trader)).heartbeat).toEqual(expired.heartbeat);

    // An empty id starts a new session; the old id stays refused, the new one renews.
    const next = (await heartbeat(trader, { heartbeat_id: '' })).body;
    expect(next.heartbeat_id).not.toBe(session.heartbeat_id);
    expect((await heartbeat(trader, { heartbeat_id: session.heartbeat_id })).status).toBe(409);
    expect((await heartbeat(trader, { heartbeat_id: next.heartbeat_id })).body.heartbeat_id).toBe(next.heartbeat_id);
    expect(await status(trader)).toMatchObject({ heartbeat_active: true, order_scoring_enabled: true, heartbeat: { heartbeat_id: next.heartbeat_id, cancelled_at: null, cancelled_count: 0 } });
    await checkTradingInvariants(api.db);
  });

  it('expires an unswept session before starting a new one on an empty id, cancelling exactly its account\'s resting orders', async () => {
    const ticker = await newMarket();
    const trader = await account();
    const bystander = await account();
    const own = await order(trader, { ticker, side: 'yes', count: '3', price: '0.20' });
    const kept = await order(bystander, { ticker, side: 'yes', count: '3', price: '0.21' });
    const session = (await heartbeat(trader)).body;
    await outlive(session);
    const fresh = (await heartbeat(trader)).body;
    expect(fresh.heartbeat_id).not.toBe(session.heartbeat_id);
    expect((await read(`/api/portfolio/orders/${own.order_id}`, trader)).status).toBe('CANCELLED');
    expect((await read(`/api/portfolio/orders/${kept.order_id}`, bystander)).status).toBe('OPEN');
    const cancelled = await api.db('order_sessions').where({ id: session.heartbeat_id }).first();
    expect(cancelled.cancelled_count).toBe(1);
    expect((await api.db('orders').where({ id: own.order_id }).first()).cancel_reason).toBe('heartbeat');
  });

  it('keeps one session per account when starts race', async () => {
    const trader = await account();
    const answers = await Promise.all(Array.from({ length: 6 }, (_, i) => heartbeat(trader, undefined, i % 2 ? '/api/portfolio/heartbeat' : '/v1/heartbeats')));
    expect(answers.map((a) => a.status)).toEqual([200, 200, 200, 200, 200, 200]);
    expect(new Set(answers.map((a) => a.body.heartbeat_id)).size).toBe(1);
    expect(await api.db('order_sessions').where({ account_id: (await api.get('/api/auth/me', { token: trader })).body.user.id }).count('* as n')).toEqual([{ n: '1' }]);
  });

  it.each([
    ['an unknown property', { heartbeat_id: null, interval: 5 }],
    ['a number as id', { heartbeat_id: 12 }],
    ['an id over 128 characters', { heartbeat_id: 'x'.repeat(129) }],
    ['an array body', [null]],
  ])('refuses %s with 400', async (_name, body) => {
    const response = await heartbeat(await account(), body);
    expect(response.status).toBe(400);
    expect(response.body.error.code).toBe('invalid_request');
  });

  it('needs a token, refuses malformed JSON and a body over 512 KiB', async () => {
    expect((await heartbeat(undefined)).status).toBe(401);
    const trader = await account();
    expect((await api.request('POST', '/api/portfolio/heartbeat', { token: trader, rawBody: '{"heartbeat_id": ' })).status).toBe(400);
    expect((await api.request('POST', '/api/portfolio/heartbeat', { token: trader, rawBody: JSON.stringify({ heartbeat_id: 'x'.repeat(600 * 1024) }) })).status).toBe(413);
  });
});

describe('the order-book client heartbeat paths', () => {
  it.each(HEARTBEAT_ALIASES)('POST %s answers {status: "ok", heartbeat_id} and shares the session of the native path', async (path) => {
    const trader = await account();
    const started = await heartbeat(trader, { heartbeat_id: null }, path);
    expect(started.status).toBe(200);
    expect(started.body).toEqual({ status: 'ok', heartbeat_id: expect.stringMatching(UUID) });
    const id = started.body.heartbeat_id;
    // Renewed on the alias with its id, with no body at all, and on the native path.
    expect((await heartbeat(trader, { heartbeat_id: id }, path)).body).toEqual({ status: 'ok', heartbeat_id: id });
    expect((await heartbeat(trader, undefined, path)).body).toEqual({ status: 'ok', heartbeat_id: id });
    expect((await heartbeat(trader, { heartbeat_id: id })).body.heartbeat_id).toBe(id);
    // Signature headers of order-book clients are ignored; the Bearer token authenticates.
    const signed = await api.request('POST', path, { token: trader, body: { heartbeat_id: id }, headers: { POLY_ADDRESS: '0xabc', POLY_SIGNATURE: 'sig', POLY_TIMESTAMP: '1', POLY_API_KEY: 'k', POLY_PASSPHRASE: 'p' } });
    expect(signed.body).toEqual({ status: 'ok', heartbeat_id: id });

    expect((await heartbeat(trader, { heartbeat_id: randomUUID() }, path)).status).toBe(400);
    expect((await heartbeat(trader, { heartbeat_id: null, extra: 1 }, path)).status).toBe(400);
    expect((await heartbeat(undefined, { heartbeat_id: null }, path)).status).toBe(401);
    expect((await api.request('POST', path, { token: trader, rawBody: JSON.stringify({ heartbeat_id: 'x'.repeat(600 * 1024) }) })).status).toBe(413);
  });

  it('answers 409 on an alias for an expired session', async () => {
    const trader = await account();
    const session = (await heartbeat(trader)).body;
    await outlive(session);
    for (const path of HEARTBEAT_ALIASES) expect((await heartbeat(trader, { heartbeat_id: session.heartbeat_id }, path)).status).toBe(409);
  });
});

describe('GET /api/portfolio/order-scoring/status', () => {
  it('shows an account that never started a session: heartbeat null, nothing required, its live orders and their notional', async () => {
    const trader = await account();
    const empty = await status(trader);
    const me = (await api.get('/api/auth/me', { token: trader })).body.user;
    expect(empty).toEqual({
      user_id: me.id,
      requires_heartbeat: false,
      order_scoring_enabled: true,
      heartbeat_active: false,
      open_orders: 0,
      scorable_orders: 0,
      markets: 0,
      open_notional: '0.00000000',
      heartbeat: null,
    });
    const [a, b] = [await newMarket(), await newMarket()];
    await order(trader, { ticker: a, side: 'yes', count: '10', price: '0.45' });
    await order(trader, { ticker: a, side: 'no', count: '3.5', price: '0.07' });
    const gone = await order(trader, { ticker: b, side: 'yes', count: '1', price: '0.99' });
    await order(trader, { ticker: b, side: 'yes', count: '0.0001', price: '0.33' });
    expect((await api.delete(`/api/portfolio/orders/${gone.order_id}`, { token: trader })).status).toBe(200);
    // 10 x 0.45 + 3.5 x 0.07 + 0.0001 x 0.33 = 4.5 + 0.245 + 0.000033
    expect(await status(trader)).toMatchObject({ open_orders: 3, scorable_orders: 3, markets: 2, open_notional: '4.74503300', heartbeat: null });
  });

  it('shows the live session with the seconds left, then its expiry', async () => {
    const trader = await account();
    const ticker = await newMarket();
    await order(trader, { ticker, side: 'yes', count: '2', price: '0.10' });
    const session = (await heartbeat(trader)).body;
    const live = await status(trader);
    expect(live).toMatchObject({ requires_heartbeat: true, heartbeat_active: true, order_scoring_enabled: true, open_orders: 1 });
    expect(live.heartbeat).toMatchObject({ heartbeat_id: session.heartbeat_id, active: true, cancelled_at: null, cancelled_count: 0 });
    expect(live.heartbeat.seconds_until_expiry).toBeGreaterThanOrEqual(1);
    expect(live.heartbeat.seconds_until_expiry).toBeLessThanOrEqual(2);
    await outlive(session);
    // The status call finds the session expired: it expires it (cancelling the order) before answering.
    const after = await status(trader);
    expect(after).toMatchObject({ requires_heartbeat: true, heartbeat_active: false, order_scoring_enabled: false, open_orders: 0, open_notional: '0.00000000' });
    expect(after.heartbeat).toMatchObject({ active: false, cancelled_count: 1, seconds_until_expiry: 0 });
    expect(after.heartbeat.cancelled_at).not.toBeNull();
  });

  it('needs a token', async () => {
    expect((await api.get('/api/portfolio/order-scoring/status')).status).toBe(401);
  });
});

describe('order scoring: each condition', () => {
  const rewards = { rewards_min_size: '5', rewards_max_spread: '0.03' };

  /** A rewarded market whose book has a YES bid at 0.49 and a YES ask at 0.51 (midpoint 0.50), by another account. */
  async function rewardedBook(): Promise<{ ticker: string; maker: string; bid: any; ask: any }> {
    const ticker = await newMarket(rewards);
    const maker = await account();
    const bid = await order(maker, { ticker, side: 'yes', count: '10', price: '0.49' });
    const ask = await order(maker, { ticker, side: 'no', count: '10', price: '0.49' }); // a YES ask at 0.51
    return { ticker, maker, bid, ask };
  }

  it('is true within the maximum spread of the midpoint (inclusive, both outcomes) and false outside it', async () => {
    const { ticker } = await rewardedBook();
    const trader = await account();
    const within = await order(trader, { ticker, side: 'yes', count: '10', price: '0.48' }); // 0.02 from 0.50
    const edge = await order(trader, { ticker, side: 'yes', count: '10', price: '0.47' }); // 0.03: inclusive
    const outside = await order(trader, { ticker, side: 'yes', count: '10', price: '0.46' }); // 0.04
    const noWithin = await order(trader, { ticker, side: 'no', count: '10', price: '0.48' }); // a YES ask at 0.52
    const noOutside = await order(trader, { ticker, side: 'no', count: '10', price: '0.46' }); // a YES ask at 0.54
    expect(await scoring(trader, within.order_id)).toBe(true);
    expect(await scoring(trader, edge.order_id)).toBe(true);
    expect(await scoring(trader, outside.order_id)).toBe(false);
    expect(await scoring(trader, noWithin.order_id)).toBe(true);
    expect(await scoring(trader, noOutside.order_id)).toBe(false);
  });

  it('needs at least the minimum size remaining', async () => {
    const { ticker } = await rewardedBook();
    const trader = await account();
    const small = await order(trader, { ticker, side: 'yes', count: '4.9999', price: '0.49' });
    const exact = await order(trader, { ticker, side: 'yes', count: '5', price: '0.49' });
    expect(await scoring(trader, small.order_id)).toBe(false);
    expect(await scoring(trader, exact.order_id)).toBe(true);
    // Decreased below the minimum: no longer scoring.
    expect((await api.post(`/api/portfolio/orders/${exact.order_id}/decrease`, { count: '4' }, { token: trader })).status).toBe(200);
    expect(await scoring(trader, exact.order_id)).toBe(false);
  });

  it('needs the order to be the caller\'s and resting: another account\'s, unknown, malformed, cancelled and filled orders are false', async () => {
    const { ticker, maker, bid, ask } = await rewardedBook();
    const trader = await account();
    expect(await scoring(maker, bid.order_id)).toBe(true);
    expect(await scoring(trader, bid.order_id)).toBe(false);
    expect(await scoring(trader, randomUUID())).toBe(false);
    expect(await scoring(trader, 'not-an-order')).toBe(false);
    const cancelled = await order(trader, { ticker, side: 'yes', count: '10', price: '0.49' });
    expect(await scoring(trader, cancelled.order_id)).toBe(true);
    await api.delete(`/api/portfolio/orders/${cancelled.order_id}`, { token: trader });
    expect(await scoring(trader, cancelled.order_id)).toBe(false);
    // The maker's ask fills completely against a buyer: FILLED, no longer resting.
    const taker = await account();
    expect((await order(taker, { ticker, side: 'yes', count: '10', price: '0.51' })).status).toBe('FILLED');
    expect(await scoring(maker, ask.order_id)).toBe(false);
  });

  it('needs rewards enabled on the market, the market ACTIVE, and a book with both sides', async () => {
    const plain = await newMarket();
    const trader = await account();
    const other = await account();
    await order(other, { ticker: plain, side: 'yes', count: '10', price: '0.49' });
    await order(other, { ticker: plain, side: 'no', count: '10', price: '0.49' });
    const unrewarded = await order(trader, { ticker: plain, side: 'yes', count: '10', price: '0.50' });
    expect(await scoring(trader, unrewarded.order_id)).toBe(false);

    const oneSided = await newMarket(rewards);
    const lonely = await order(trader, { ticker: oneSided, side: 'yes', count: '10', price: '0.50' });
    expect(await scoring(trader, lonely.order_id)).toBe(false); // no ask: no midpoint
    await order(other, { ticker: oneSided, side: 'no', count: '10', price: '0.48' }); // a YES ask at 0.52: midpoint 0.51
    expect(await scoring(trader, lonely.order_id)).toBe(true);

    expect((await api.post(`/api/admin/markets/${oneSided}/close`, undefined, { token: admin })).status).toBe(200);
    expect(await scoring(trader, lonely.order_id)).toBe(false);
  });

  it('needs an order expiry still ahead', async () => {
    const { ticker } = await rewardedBook();
    const trader = await account();
    const later = await order(trader, { ticker, side: 'yes', count: '10', price: '0.49', expiration_ts: new Date(Date.now() + 3_600_000).toISOString() });
    const soon = await order(trader, { ticker, side: 'yes', count: '10', price: '0.49', expiration_ts: new Date(Date.now() + 1_500).toISOString() });
    expect(await scoring(trader, later.order_id)).toBe(true);
    expect(await scoring(trader, soon.order_id)).toBe(true);
    await sleep(1_700);
    expect(await scoring(trader, soon.order_id)).toBe(false);
    expect(await scoring(trader, later.order_id)).toBe(true);
  });

  it('needs a live session once the account started one', async () => {
    const { ticker } = await rewardedBook();
    const trader = await account();
    const placed = await order(trader, { ticker, side: 'yes', count: '10', price: '0.49' });
    expect(await scoring(trader, placed.order_id)).toBe(true); // never started a session
    const session = (await heartbeat(trader)).body;
    expect(await scoring(trader, placed.order_id)).toBe(true); // live
    await outlive(session);
    // Expired (not swept on this service, so the order still rests): not scoring.
    expect((await read(`/api/portfolio/orders/${placed.order_id}`, trader)).status).toBe('OPEN');
    expect(await scoring(trader, placed.order_id)).toBe(false);
    // A new session expires the old one first (the order is cancelled); a new order scores again.
    await heartbeat(trader);
    expect(await scoring(trader, placed.order_id)).toBe(false);
    const again = await order(trader, { ticker, side: 'yes', count: '10', price: '0.49' });
    expect(await scoring(trader, again.order_id)).toBe(true);
  });
});

describe('order scoring: every path', () => {
  async function scored(): Promise<{ trader: string; yes: string; no: string }> {
    const ticker = await newMarket({ rewards_min_size: '1', rewards_max_spread: '0.05' });
    const other = await account();
    await order(other, { ticker, side: 'yes', count: '5', price: '0.49' });
    await order(other, { ticker, side: 'no', count: '5', price: '0.49' }); // a YES ask at 0.51: midpoint 0.50
    const trader = await account();
    const yes = (await order(trader, { ticker, side: 'yes', count: '5', price: '0.48' })).order_id;
    const no = (await order(trader, { ticker, side: 'yes', count: '5', price: '0.30' })).order_id;
    return { trader, yes, no };
  }

  it.each(SINGLE_PATHS)('GET %s takes order_id, orderId or orderID: exactly one', async (path) => {
    const { trader, yes, no } = await scored();
    for (const name of ['order_id', 'orderId', 'orderID']) {
      expect(await scoring(trader, yes, path, name)).toBe(true);
      expect(await scoring(trader, no, path, name)).toBe(false);
    }
    for (const query of ['', '?order_id=', `?order_id=${yes}&orderId=${yes}`, `?orderId=${yes}&orderID=${no}`, `?order_id=${yes}&order_id=${no}`, `?order_id=${'x'.repeat(129)}`]) {
      const refused = await api.get(`${path}${query}`, { token: trader });
      expect(refused.status, query).toBe(400);
    }
    expect((await api.get(`${path}?order_id=${yes}`)).status).toBe(401);
  });

  it.each(BATCH_PATHS)('GET %s takes ids repeated, comma-separated or both, at most 1,000', async (path) => {
    const { trader, yes, no } = await scored();
    const unknown = randomUUID();
    const expected = { [yes]: true, [no]: false, [unknown]: false };
    for (const query of [`order_ids=${yes}&order_ids=${no}&order_ids=${unknown}`, `order_ids=${yes},${no},${unknown}`, `order_ids=${yes}%2C${no}&order_ids=${unknown}`, `order_ids=${yes},${no}&order_ids=${unknown}&order_ids=${yes}`]) {
      const response = await api.get(`${path}?${query}`, { token: trader });
      expect(response.status, query).toBe(200);
      expect(response.body, query).toEqual(expected);
    }
    const single = await api.get(`${path}?order_ids=${yes}`, { token: trader });
    expect(single.body).toEqual({ [yes]: true });

    const many = [yes, ...Array.from({ length: 999 }, () => randomUUID())];
    const repeated = await api.get(`${path}?${many.map((id) => `order_ids=${id}`).join('&')}`, { token: trader });
    expect(repeated.status).toBe(200);
    expect(Object.keys(repeated.body)).toHaveLength(1000);
    expect(repeated.body[yes]).toBe(true);
    expect((await api.get(`${path}?order_ids=${many.join(',')}`, { token: trader })).status).toBe(200);

    const tooMany = [...many, randomUUID()];
    for (const query of [tooMany.map((id) => `order_ids=${id}`).join('&'), `order_ids=${tooMany.join(',')}`, `order_ids=${many.join(',')}&order_ids=${randomUUID()}`, '', 'order_ids=', `order_ids=${yes},,${no}`]) {
      const refused = await api.get(`${path}?${query}`, { token: trader });
      expect(refused.status, query.slice(0, 60)).toBe(400);
      expect(refused.body.error.code).toBe('invalid_request');
    }
    expect((await api.get(`${path}?order_ids=${yes}`)).status).toBe(401);
  });

  it.each(BATCH_PATHS)('POST %s takes a bare JSON array of at most 1,000 ids', async (path) => {
    const { trader, yes, no } = await scored();
    const unknown = randomUUID();
    const response = await api.post(path, [yes, no, unknown, yes, 'not-an-order'], { token: trader });
    expect(response.status).toBe(200);
    expect(response.body).toEqual({ [yes]: true, [no]: false, [unknown]: false, 'not-an-order': false });
    expect((await api.post(path, [], { token: trader })).body).toEqual({});
    const many = [yes, ...Array.from({ length: 999 }, () => randomUUID())];
    expect(Object.keys((await api.post(path, many, { token: trader })).body)).toHaveLength(1000);
    for (const body of [[...many, randomUUID()], { order_ids: [yes] }, [1, 2], [''], 'x']) {
      expect((await api.post(path, body, { token: trader })).status).toBe(400);
    }
    expect((await api.post(path, [yes])).status).toBe(401);
    expect((await api.request('POST', path, { token: trader, rawBody: JSON.stringify(Array.from({ length: 20_000 }, () => 'x'.repeat(30))) })).status).toBe(413);
  });

  it.each(SINGLE_PATHS)('POST %s (legacy) takes {order_ids} and answers {results, scoring}', async (path) => {
    const { trader, yes, no } = await scored();
    const response = await api.post(path, { order_ids: [no, yes, no] }, { token: trader });
    expect(response.status).toBe(200);
    expect(response.body).toEqual({
      results: [
        { order_id: no, scoring: false },
        { order_id: yes, scoring: true },
        { order_id: no, scoring: false },
      ],
      scoring: { [no]: false, [yes]: true },
    });
    expect((await api.post(path, { order_ids: [] }, { token: trader })).body).toEqual({ results: [], scoring: {} });
    for (const body of [{ order_ids: Array.from({ length: 1001 }, () => randomUUID()) }, [yes], {}, { order_ids: [yes], extra: true }]) {
      expect((await api.post(path, body, { token: trader })).status).toBe(400);
    }
    expect((await api.post(path, { order_ids: [yes] })).status).toBe(401);
    expect((await api.request('POST', path, { token: trader, rawBody: JSON.stringify({ order_ids: ['x'.repeat(600 * 1024)] }) })).status).toBe(413);
  });
});

describe('the fee-free profile on order payloads', () => {
  it.each(FEE_FIELDS)('refuses a non-zero %s on preview and placement, naming it, and accepts zero', async (field) => {
    const ticker = await newMarket();
    const trader = await account();
    const base = { ticker, side: 'yes', count: '2', price: '0.45' };
    for (const value of [25, '10', 0.5, -1, '-0.1', 'zero', true]) {
      for (const path of ['/api/portfolio/orders/preview', '/api/portfolio/orders']) {
        const refused = await api.post(path, { ...base, [field]: value }, { token: trader });
        expect(refused.status, `${path} ${JSON.stringify(value)}`).toBe(400);
        expect(refused.body.error.code).toBe('invalid_request');
        // A number or a string reaches the fee check; another type fails the document's schema, naming the field too.
        if (value === true) expect(refused.body.error.message).toContain(`'${field}'`);
        else expect(refused.body.error.message).toMatch(new RegExp(`^${field} must be 0: the exchange is fee-free`));
      }
    }
    expect((await read('/api/portfolio/orders', trader)).orders).toEqual([]);
    for (const value of [0, '0', '0.00', null]) {
      const preview = await api.post('/api/portfolio/orders/preview', { ...base, [field]: value }, { token: trader });
      expect(preview.status).toBe(200);
      const placed = await api.post('/api/portfolio/orders', { ...base, [field]: value }, { token: trader });
      expect(placed.status).toBe(201);
    }
  });

  it('refuses a malformed builder code, echoes a valid one in the preview, stores it on the order, and answers every fee as zero', async () => {
    const ticker = await newMarket();
    const trader = await account();
    const code = `0x${'c0ffee'.repeat(10)}abcd`;
    const base = { ticker, side: 'yes', count: '2', price: '0.45' };
    for (const bad of ['0x1234', `${'ab'.repeat(32)}`, `0x${'g'.repeat(64)}`, `0x${'a'.repeat(65)}`]) {
      expect((await api.post('/api/portfolio/orders/preview', { ...base, builder_code: bad }, { token: trader })).status).toBe(400);
      expect((await api.post('/api/portfolio/orders', { ...base, builder_code: bad }, { token: trader })).status).toBe(400);
    }
    const allZero = Object.fromEntries(FEE_FIELDS.map((f) => [f, 0]));
    const preview = (await api.post('/api/portfolio/orders/preview', { ...base, builder_code: code, ...allZero }, { token: trader })).body;
    expect(preview).toMatchObject({ builder_code: code, platform_taker_fee_bps: 0, platform_maker_fee_bps: 0, builder_maker_fee_bps: 0, builder_taker_fee_bps: 0 });
    for (const role of ['maker', 'taker']) expect(preview[role]).toMatchObject({ platform_fee_bps: 0, builder_fee_bps: 0, platform_fee: '0.00', builder_fee: '0.00', total_fee: '0.00' });
    const placed = await order(trader, { ...base, builder_code: code, ...allZero });
    expect(placed).toMatchObject({ builder_code: code, builder_maker_fee_bps: 0, builder_taker_fee_bps: 0 });
    expect((await read('/api/portfolio/orders', trader)).orders[0]).toMatchObject({ order_id: placed.order_id, builder_code: code, builder_maker_fee_bps: 0, builder_taker_fee_bps: 0 });
    expect((await api.db('orders').where({ id: placed.order_id }).first()).builder_code).toBe(code);
  });
});

describe('the expiry sweep', () => {
  let swept: TestService;
  let sweptAdmin: string;

  beforeAll(async () => {
    swept = await TestService.start({ ADMIN_EMAIL: ADMIN.email, ADMIN_PASSWORD: ADMIN.password, ORDER_HEARTBEAT_TIMEOUT_SECS: '1', ORDER_HEARTBEAT_SWEEP_INTERVAL_SECS: '1' });
    sweptAdmin = (await swept.post('/api/auth/login', ADMIN)).body.token;
    await createEvent(swept, sweptAdmin, 'SWEEP');
  });
  afterAll(() => swept.stop());

  it('cancels exactly the expired account\'s resting orders, once, and nothing of any other account', async () => {
    const [m1, m2] = [await newMarket(undefined, swept, sweptAdmin, 'SWEEP'), await newMarket(undefined, swept, sweptAdmin, 'SWEEP')];
    const [expiring, noSession, renewing, counterparty] = await Promise.all([account(swept), account(swept), account(swept), account(swept)]);
    // The expiring account: buys and a sell (shares from a trade first), on two markets.
    await order(counterparty, { ticker: m1, side: 'no', count: '4', price: '0.40' }, swept);
    expect((await order(expiring, { ticker: m1, side: 'yes', count: '4', price: '0.60' }, swept)).status).toBe('FILLED');
    const expiringOrders = [
      await order(expiring, { ticker: m1, side: 'yes', count: '10', price: '0.30' }, swept),
      await order(expiring, { ticker: m1, side: 'yes', action: 'sell', count: '3', price: '0.90' }, swept),
      await order(expiring, { ticker: m2, side: 'no', count: '2.5', price: '0.20' }, swept),
    ];
    const partial = await order(expiring, { ticker: m2, side: 'yes', count: '6', price: '0.50' }, swept);
    expect((await order(counterparty, { ticker: m2, side: 'no', count: '2', price: '0.50' }, swept)).status).toBe('FILLED');
    expect((await read(`/api/portfolio/orders/${partial.order_id}`, expiring, swept)).status).toBe('PARTIAL');
    expiringOrders.push(partial);
    const others = [
      await order(noSession, { ticker: m1, side: 'yes', count: '5', price: '0.31' }, swept),
      await order(renewing, { ticker: m2, side: 'yes', count: '5', price: '0.32' }, swept),
      await order(counterparty, { ticker: m2, side: 'no', count: '1', price: '0.10' }, swept),
    ];
    const session = (await heartbeat(expiring, undefined, '/api/portfolio/heartbeat', swept)).body;
    let renewingId = (await heartbeat(renewing, undefined, '/v1/heartbeats', swept)).body.heartbeat_id;

    // Timeout 1 s, sweep every 1 s: cancelled within about 2 s; the renewing account keeps its session alive.
    const deadline = Date.now() + 6_000;
    for (;;) {
      renewingId = (await heartbeat(renewing, { heartbeat_id: renewingId }, '/v1/heartbeats', swept)).body.heartbeat_id;
      const row = await swept.db('order_sessions').where({ id: session.heartbeat_id }).first();
      if (row.cancelled_at) break;
      if (Date.now() > deadline) throw new Error('the session was not swept in time');
      await sleep(100);
    }
    for (const placed of expiringOrders) {
      const row = await swept.db('orders').where({ id: placed.order_id }).first();
      expect(row).toMatchObject({ status: 'CANCELLED', cancel_reason: 'heartbeat' });
      expect(Number(row.remaining)).toBe(0);
    }
    for (const placed of others) expect((await swept.db('orders').where({ id: placed.order_id }).first()).status).toBe('OPEN');
    // Reserves released: no Dots and no shares held back.
    expect(await read('/api/portfolio/balance', expiring, swept)).toMatchObject({ reserved: '0.00' });
    expect((await read('/api/portfolio/positions', expiring, swept)).positions.every((p: any) => p.count === p.available)).toBe(true);

    const shown = await status(expiring, swept);
    expect(shown).toMatchObject({ heartbeat_active: false, open_orders: 0, heartbeat: { heartbeat_id: session.heartbeat_id, active: false, cancelled_count: 4 } });
    // Exactly once: one release per cancelled buy in the ledger.
    const releases = await swept.db('ledger_entries').where({ kind: 'release' }).whereIn('reference', expiringOrders.map((o) => o.order_id)).count('* as n');
    expect(releases).toEqual([{ n: '3' }]);
    expect(await status(renewing, swept)).toMatchObject({ heartbeat_active: true, open_orders: 1 });
    expect((await heartbeat(expiring, { heartbeat_id: session.heartbeat_id }, '/api/clob/heartbeats', swept)).status).toBe(409);
    await checkTradingInvariants(swept.db);
  });
});

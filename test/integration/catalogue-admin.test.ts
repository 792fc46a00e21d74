import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { TestService } from '../support/service.js';

const ADMIN = { email: 'catalogue-admin@dots.local', password: 'catalogue-password' };

let api: TestService;
let admin: string;
let user: string;

beforeAll(async () => {
  api = await TestService.start({ ADMIN_EMAIL: ADMIN.email, ADMIN_PASSWORD: ADMIN.password });
  admin = (await api.post('/api/auth/login', ADMIN)).body.token;
  user = (await api.register()).token;
});
afterAll(() => api.stop());

const post = (path: string, body?: unknown, token = admin) => api.post(path, body, { token });

async function seedEvent(prefix: string, mutuallyExclusive = false): Promise<void> {
  await post('/api/admin/series', { ticker: `${prefix}S`, title: `${prefix} series`, category: 'politics', frequency: 'weekly' });
  await post('/api/admin/events', { event_ticker: `${prefix}E`, series_ticker: `${prefix}S`, title: `${prefix} event`, strike_date: '2030-01-01T00:00:00Z', mutually_exclusive: mutuallyExclusive });
}

describe('catalogue administration', () => {
  it('creates a tag, a series, an event and a market in their native shapes', async () => {
    const tag = await post('/api/admin/tags', { slug: 'fed', label: 'Fed' });
    expect(tag.status).toBe(201);
    expect(tag.body.tag).toMatchObject({ slug: 'fed', name: 'Fed', market_count: 0 });

    const series = await post('/api/admin/series', { ticker: 'KXFED', title: 'Fed decisions', category: 'us-economy', frequency: 'monthly', tags: ['fed'], description: 'Rates' });
    expect(series.status).toBe(201);
    expect(series.body.series).toMatchObject({ ticker: 'KXFED', category_slug: 'us-economy', category_name: 'Us Economy', frequency: 'monthly', tags: ['fed'], event_count: 0, description: 'Rates' });

    const event = await post('/api/admin/events', { event_ticker: 'KXFED-26DEC', series_ticker: 'KXFED', title: 'December', strike_date: '2026-12-16T19:00:00Z', start_date: '2026-12-01T00:00:00Z', mutually_exclusive: true, tags: ['fed'] });
    expect(event.status).toBe(201);
    expect(event.body.event).toMatchObject({ eventTicker: 'KXFED-26DEC', seriesTicker: 'KXFED', mutuallyExclusive: true, strikeDate: '2026-12-16T19:00:00.000Z', status: 'ACTIVE', description: '' });

    const market = await post('/api/admin/markets', { ticker: 'KXFED-26DEC-T4', event_ticker: 'KXFED-26DEC', title: 'Above 4%', tags: ['fed'], rewards_min_size: '10', rewards_max_spread: '0.03' });
    expect(market.status).toBe(201);
    expect(market.body.market).toMatchObject({ ticker: 'KXFED-26DEC-T4', eventTicker: 'KXFED-26DEC', status: 'ACTIVE', lastYesPrice: '0', lastNoPrice: '0', volume: '0', result: null, rewardsMinSize: '10', rewardsMaxSpread: '0.03' });

    const after = await post('/api/admin/tags', { slug: 'fed-2', label: 'Fed 2' });
    expect(after.body.tag.market_count).toBe(0);
    expect((await api.db('market_tags').count<{ count: string }[]>('* as count'))[0]!.count).toBe('1');
  });

  it('answers 409 to duplicates and 400 to unknown references, creating nothing', async () => {
    await post('/api/admin/tags', { slug: 'dup', label: 'Dup' });
    expect((await post('/api/admin/tags', { slug: 'dup', label: 'Again' })).status).toBe(409);
    await seedEvent('DUP');
    expect((await post('/api/admin/series', { ticker: 'DUPS', title: 'x', category: 'c', frequency: 'daily' })).status).toBe(409);
    expect((await post('/api/admin/events', { event_ticker: 'DUPE', series_ticker: 'DUPS', title: 'x', strike_date: '2030-01-01T00:00:00Z' })).status).toBe(409);

    const unknownSeries = await post('/api/admin/events', { event_ticker: 'NEWE', series_ticker: 'NOPE', title: 'x', strike_date: '2030-01-01T00:00:00Z' });
    expect(unknownSeries.status).toBe(400);
    expect(unknownSeries.body.error.message).toBe("series_ticker 'NOPE' names no series");
    const unknownTag = await post('/api/admin/series', { ticker: 'NEWS', title: 'x', category: 'c', frequency: 'daily', tags: ['missing', 'dup'] });
    expect(unknownTag.status).toBe(400);
    expect(unknownTag.body.error.message).toBe('unknown tag: missing');
    expect(await api.db('series').where({ ticker: 'NEWS' })).toEqual([]);
    const backwards = await post('/api/admin/events', { event_ticker: 'BACKE', series_ticker: 'DUPS', title: 'x', start_date: '2030-01-02T00:00:00Z', strike_date: '2030-01-01T00:00:00Z' });
    expect(backwards.status).toBe(400);
    expect((await post('/api/admin/markets', { ticker: 'M1', event_ticker: 'NOPE', title: 'x' })).status).toBe(400);
  });

  it.each([
    ['/api/admin/tags', { slug: 'Bad Slug', label: 'x' }],
    ['/api/admin/tags', { slug: 'ok', label: '' }],
    ['/api/admin/series', { ticker: 'lower', title: 'x', category: 'c', frequency: 'daily' }],
    ['/api/admin/events', { event_ticker: 'E', series_ticker: 'S', title: 'x', strike_date: 'tomorrow' }],
    ['/api/admin/markets', { ticker: 'M', event_ticker: 'E', title: 'x', rewards_max_spread: '1.5' }],
    ['/api/admin/markets', { ticker: "M'; drop table markets; --", event_ticker: 'E', title: 'x' }],
  ])('refuses malformed input to %s with a 400', async (path, body) => {
    const response = await post(path, body);
    expect(response.status).toBe(400);
    expect(response.body.error.code).toBe('invalid_request');
  });

  it('is for ADMIN only', async () => {
    expect((await post('/api/admin/tags', { slug: 'nope', label: 'x' }, user)).status).toBe(403);
    expect((await api.post('/api/admin/tags', { slug: 'nope', label: 'x' })).status).toBe(401);
    expect((await post('/api/admin/markets/ANY/close', undefined, user)).status).toBe(403);
  });
});

describe('market lifecycle', () => {
  it('closes and resolves markets; the event status follows its markets', async () => {
    await seedEvent('LIFE');
    await post('/api/admin/markets', { ticker: 'LIFE-A', event_ticker: 'LIFEE', title: 'A' });
    await post('/api/admin/markets', { ticker: 'LIFE-B', event_ticker: 'LIFEE', title: 'B' });
    const eventStatus = async () => (await api.db('events').where({ ticker: 'LIFEE' }).first()).status;

    const closed = await post('/api/admin/markets/LIFE-A/close');
    expect(closed.status).toBe(200);
    expect(closed.body.market.status).toBe('CLOSED');
    expect(await eventStatus()).toBe('ACTIVE');
    expect((await post('/api/admin/markets/LIFE-A/close')).status).toBe(409);

    await post('/api/admin/markets/LIFE-B/close');
    expect(await eventStatus()).toBe('CLOSED');

    const resolved = await post('/api/admin/markets/LIFE-A/resolve', { result: 'yes' });
    expect(resolved.status).toBe(200);
    expect(resolved.body.market).toMatchObject({ status: 'RESOLVED', result: 'yes' });
    expect(await eventStatus()).toBe('CLOSED');
    await post('/api/admin/markets/LIFE-B/resolve', { result: 'invalid' });
    expect(await eventStatus()).toBe('RESOLVED');
    expect((await post('/api/admin/markets/LIFE-B/resolve', { result: 'no' })).status).toBe(409);
    expect((await post('/api/admin/markets', { ticker: 'LIFE-C', event_ticker: 'LIFEE', title: 'C' })).status).toBe(409);
  });

  it('allows one YES among the markets of a mutually exclusive event, any number of NO and INVALID', async () => {
    await seedEvent('MX', true);
    for (const m of ['MX-A', 'MX-B', 'MX-C', 'MX-D']) await post('/api/admin/markets', { ticker: m, event_ticker: 'MXE', title: m });
    expect((await post('/api/admin/markets/MX-A/resolve', { result: 'yes' })).status).toBe(200);
    const second = await post('/api/admin/markets/MX-B/resolve', { result: 'yes' });
    expect(second.status).toBe(409);
    expect(second.body.error.message).toBe("event 'MXE' is mutually exclusive and another market already resolved yes");
    expect((await api.db('markets').where({ ticker: 'MX-B' }).first()).status).toBe('ACTIVE');
    expect((await post('/api/admin/markets/MX-B/resolve', { result: 'no' })).status).toBe(200);
    expect((await post('/api/admin/markets/MX-C/resolve', { result: 'invalid' })).status).toBe(200);
  });

  it('lets only one of two concurrent YES resolutions of a mutually exclusive event win', async () => {
    await seedEvent('RACE', true);
    await post('/api/admin/markets', { ticker: 'RACE-A', event_ticker: 'RACEE', title: 'A' });
    await post('/api/admin/markets', { ticker: 'RACE-B', event_ticker: 'RACEE', title: 'B' });
    const results = await Promise.all([post('/api/admin/markets/RACE-A/resolve', { result: 'yes' }), post('/api/admin/markets/RACE-B/resolve', { result: 'yes' })]);
    expect(results.map((r) => r.status).sort()).toEqual([200, 409]);
  });

  it('answers 404 for an unknown market and 400 for an unknown result', async () => {
    expect((await post('/api/admin/markets/NOPE/close')).status).toBe(404);
    expect((await post('/api/admin/markets/NOPE/resolve', { result: 'yes' })).status).toBe(404);
    expect((await post('/api/admin/markets/NOPE/resolve', { result: 'maybe' })).status).toBe(400);
  });
});

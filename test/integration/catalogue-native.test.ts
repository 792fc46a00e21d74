/* eslint max-lines: ["error", { "max": 800, "skipBlankLines": true, "skipComments": true }] -- its cases share one running service (an embedded PostgreSQL) and its fixtures: a split would start another */
import { readFile } from 'node:fs/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { generateCatalogue } from '../../src/db/seed/generator.js';
import { TestService } from '../support/service.js';

/**
 * The native catalogue: /api/events, /api/series, /api/tags/{slug}, /api/markets, /api/search.
 * A generated catalogue gives volume (cursor walks, clamping, ranking among many); hand-made fixtures
 * (series NTS and NTX, events NTS-E*, tags nt-*) give exact values to assert.
 */

let api: TestService;

const HUGE = 'x'.repeat(10_000);
const SQL = encodeURIComponent("' or 1=1 --");
const enc = encodeURIComponent;

/** NUL cannot be stored or compared as text: a parameter holding one is refused with 400 naming it. */
async function expectNulRefused(path: string, where: string): Promise<void> {
  const response = await api.get(path);
  expect(response.status, path).toBe(400);
  expect(response.body.error.message, path).toBe(`${where} contains a NUL character`);
}

/** Exact timestamps with microseconds: several rows share one creation time, to exercise the (created_at, id) keys. */
const OLD = '2020-01-01T00:00:00.123456Z';
const OLDER = '2019-06-01T00:00:00.000001Z';

interface Fixture {
  categoryId: string;
  tagIds: Record<string, string>;
}

async function insertFixtures(): Promise<Fixture> {
  const db = api.db;
  const [category] = await db('categories').insert({ slug: 'native-tests', name: 'Native Tests' }).returning('id');
  const [other] = await db('categories').insert({ slug: 'native-other', name: 'Native Other' }).returning('id');
  const tagIds: Record<string, string> = {};
  for (const slug of ['nt-alpha', 'nt-beta', 'nt-gamma', 'nt-lonely', 'nt-unused']) {
    const [row] = await db('tags').insert({ slug, label: slug.replace('nt-', 'NT ') }).returning('id');
    tagIds[slug] = String(row.id);
  }
  const [nts] = await db('series')
    .insert({ ticker: 'NTS', slug: 'nts', title: 'Native test series', category_id: category.id, frequency: 'weekly', description: 'Fixtures', created_at: OLD, updated_at: OLD })
    .returning('id');
  const [ntx] = await db('series')
    .insert({ ticker: 'NTX', slug: 'ntx', title: 'Native other series', category_id: other.id, frequency: 'daily', created_at: OLD, updated_at: OLD })
    .returning('id');
  await db('series_tags').insert([
    { series_id: nts.id, tag_id: tagIds['nt-beta'] },
    { series_id: nts.id, tag_id: tagIds['nt-alpha'] },
  ]);
  const event = (ticker: string, seriesId: string, status: string, createdAt: string) => ({
    ticker,
    slug: ticker.toLowerCase(),
    series_id: seriesId,
    title: `Native ${ticker}`,
    description: `About ${ticker}`,
    status,
    start_date: '2020-01-01T00:00:00Z',
    strike_date: '2030-01-01T00:00:00Z',
    created_at: createdAt,
    updated_at: createdAt,
  });
  const events = await db('events')
    .insert([
      event('NTS-E1', nts.id, 'ACTIVE', OLD),
      event('NTS-E2', nts.id, 'ACTIVE', OLD),
      event('NTS-E3', nts.id, 'CLOSED', OLD),
      event('NTS-E4', nts.id, 'RESOLVED', OLDER),
      event('NTX-E1', ntx.id, 'ACTIVE', OLDER),
    ])
    .returning(['id', 'ticker']);
  const e1 = events.find((e: { ticker: string }) => e.ticker === 'NTS-E1')!.id;
  const e3 = events.find((e: { ticker: string }) => e.ticker === 'NTS-E3')!.id;
  const market = (ticker: string, eventId: string, status: string, result: string | null, yes: string | null, volume: string, liquidity: string) => ({
    ticker,
    event_id: eventId,
    title: `Native market ${ticker}`,
    status,
    result,
    last_yes_price: yes,
    last_no_price: yes === null ? null : (1 - Number(yes)).toFixed(2),
    volume,
    liquidity,
    created_at: OLD,
    updated_at: OLD,
  });
  const markets = await db('markets')
    .insert([
      market('NTS-E1-M1', e1, 'ACTIVE', null, '0.20', '10', '5'),
      market('NTS-E1-M2', e1, 'CLOSED', null, '0.75', '20.5', '0'),
      market('NTS-E1-M3', e1, 'RESOLVED', 'yes', '0.50', '0', '0'),
      market('NTS-E1-M4', e1, 'RESOLVED', 'invalid', null, '0', '0'),
      market('NTS-E1-M5', e1, 'RESOLVED', 'no', '0.10', '0', '0'),
      market('NTS-E3-M1', e3, 'CLOSED', null, null, '1', '0'),
    ])
    .returning(['id', 'ticker']);
  const m = (ticker: string) => markets.find((x: { ticker: string }) => x.ticker === ticker)!.id;
  await db('market_tags').insert([
    { market_id: m('NTS-E1-M1'), tag_id: tagIds['nt-alpha'] },
    { market_id: m('NTS-E1-M1'), tag_id: tagIds['nt-beta'] },
    { market_id: m('NTS-E1-M2'), tag_id: tagIds['nt-alpha'] },
    { market_id: m('NTS-E1-M2'), tag_id: tagIds['nt-beta'] },
    { market_id: m('NTS-E1-M2'), tag_id: tagIds['nt-gamma'] },
    { market_id: m('NTS-E1-M3'), tag_id: tagIds['nt-alpha'] },
    { market_id: m('NTS-E1-M3'), tag_id: tagIds['nt-beta'] },
    { market_id: m('NTS-E1-M4'), tag_id: tagIds['nt-gamma'] },
    { market_id: m('NTS-E1-M5'), tag_id: tagIds['nt-lonely'] },
  ]);
  return { categoryId: String(category.id), tagIds };
}

let fixture: Fixture;
/** When the generated catalogue was made (its series run from well before this to well after). */
const GENERATED_AT = new Date('2026-11-22T12:00:00Z');

beforeAll(async () => {
  api = await TestService.start();
  await generateCatalogue(api.db, { events: 480, eventsPerSeries: 12, marketsPerEvent: 3, creatorIds: [], now: GENERATED_AT });
  fixture = await insertFixtures();
  await api.register({ username: 'ntrader', name: 'Native Trader' });
  await api.register({ username: 'nobodyname' });
});
afterAll(() => api.stop());

/** Tickers (or another key) in the newest-first order, straight from the database. */
async function newestFirst(table: 'events' | 'series' | 'markets', where: (q: any) => void = () => {}): Promise<string[]> {
  const q = api.db(table).select('ticker').orderBy('created_at', 'desc').orderBy('id', 'desc');
  where(q);
  return (await q).map((r: { ticker: string }) => r.ticker);
}

/** Follows `cursor` from the first page to the last, collecting one field of every item. */
async function walk(path: string, items: string, key: string): Promise<{ keys: string[]; pages: number }> {
  const keys: string[] = [];
  let cursor: string | null = '';
  let pages = 0;
  const sep = path.includes('?') ? '&' : '?';
  do {
    const response: { status: number; body: any } = await api.get(`${path}${sep}cursor=${enc(cursor ?? '')}`);
    expect(response.status).toBe(200);
    keys.push(...response.body[items].map((item: Record<string, string>) => item[key]));
    cursor = response.body.cursor;
    pages += 1;
    expect(pages).toBeLessThan(1000);
  } while (cursor !== null);
  return { keys, pages };
}

function tamper(cursor: string): string {
  const decoded = JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8'));
  decoded.k[1] = 'DROP TABLE events';
  return Buffer.from(JSON.stringify(decoded)).toString('base64url');
}

describe('GET /api/events', () => {
  it('lists 20 events by default, newest first, with a cursor, and no markets or analytics', async () => {
    const response = await api.get('/api/events');
    expect(response.status).toBe(200);
    expect(response.body.events.map((e: { eventTicker: string }) => e.eventTicker)).toEqual((await newestFirst('events')).slice(0, 20));
    expect(typeof response.body.cursor).toBe('string');
    for (const event of response.body.events) {
      expect(event).not.toHaveProperty('markets');
      expect(event).not.toHaveProperty('analytics');
      expect(event.createdAt).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
      expect(event.strikeDate).toMatch(/Z$/);
    }
  });

  it('lists a generated catalogue as an exchange would: nothing created after it was made, though much opens later', async () => {
    type Listed = { eventTicker?: string; ticker?: string; createdAt: string; strikeDate?: string };
    const generated = (items: Listed[]) => items.filter((item) => (item.eventTicker ?? item.ticker)!.startsWith('KX'));
    const events = generated((await api.get('/api/events?limit=100')).body.events);
    const markets = generated((await api.get('/api/markets?limit=100')).body.markets);
    expect(events.length).toBeGreaterThan(50);
    expect(markets.length).toBeGreaterThan(50);
    for (const item of [...events, ...markets]) expect(new Date(item.createdAt).getTime()).toBeLessThanOrEqual(GENERATED_AT.getTime());
    // The newest listed include occurrences that open in the future.
    expect(events.some((event) => new Date(event.strikeDate!) > GENERATED_AT)).toBe(true);
  });

  it('walks every event once, in order, across pages (ties on the creation time included)', async () => {
    const expected = await newestFirst('events');
    const { keys, pages } = await walk('/api/events?limit=100', 'events', 'eventTicker');
    expect(keys).toEqual(expected);
    expect(pages).toBe(Math.ceil(expected.length / 100));
    // three events share a creation time to the microsecond: pages of one step through them by id
    const small = await walk('/api/events?limit=1&series_ticker=NTS', 'events', 'eventTicker');
    expect(small.keys).toEqual(['NTS-E3', 'NTS-E2', 'NTS-E1', 'NTS-E4']);
  });

  it('filters by series (case-insensitive) and by status', async () => {
    const bySeries = await api.get('/api/events?series_ticker=nts&limit=100');
    expect(bySeries.body.events.map((e: { eventTicker: string }) => e.eventTicker)).toEqual(['NTS-E3', 'NTS-E2', 'NTS-E1', 'NTS-E4']);
    expect(bySeries.body.cursor).toBeNull();
    expect(bySeries.body.events.every((e: { seriesTicker: string }) => e.seriesTicker === 'NTS')).toBe(true);

    for (const status of ['ACTIVE', 'CLOSED', 'RESOLVED']) {
      const expected = await newestFirst('events', (q) => q.where({ status }));
      expect(expected.length).toBeGreaterThan(0);
      const { keys } = await walk(`/api/events?status=${status}&limit=100`, 'events', 'eventTicker');
      expect(keys).toEqual(expected);
    }
    const both = await api.get('/api/events?series_ticker=NTS&status=CLOSED');
    expect(both.body.events.map((e: { eventTicker: string }) => e.eventTicker)).toEqual(['NTS-E3']);
  });

  it('adds nested markets and analytics to each event when asked, in one page', async () => {
    const response = await api.get('/api/events?series_ticker=NTS&with_nested_markets=true&with_analytics=true');
    expect(response.status).toBe(200);
    const [e3, e2, e1, e4] = response.body.events;
    expect(e1.markets.map((m: { ticker: string }) => m.ticker)).toEqual(['NTS-E1-M1', 'NTS-E1-M2', 'NTS-E1-M3', 'NTS-E1-M4', 'NTS-E1-M5']);
    expect(e1.markets[0]).toEqual({
      id: expect.any(String),
      ticker: 'NTS-E1-M1',
      eventTicker: 'NTS-E1',
      title: 'Native market NTS-E1-M1',
      status: 'ACTIVE',
      lastYesPrice: '0.20',
      lastNoPrice: '0.80',
      volume: '10',
      liquidity: '5',
    });
    expect(e1.analytics).toMatchObject({ marketCount: 5, yesPriceSum: '1.55' });
    expect(e2.markets).toEqual([]);
    expect(e2.analytics).toMatchObject({ marketCount: 0, avgYesPrice: '0', minYesPrice: '0', maxYesPrice: '0' });
    expect(e3.markets.map((m: { ticker: string }) => m.ticker)).toEqual(['NTS-E3-M1']);
    expect(e3.analytics).toMatchObject({ marketCount: 1, closedCount: 1, totalVolume: '1', yesPriceSum: '0', minYesPrice: '0' });
    expect(e4.markets).toEqual([]);

    const marketsOnly = await api.get('/api/events?series_ticker=NTS&with_nested_markets=true');
    expect(marketsOnly.body.events[0]).toHaveProperty('markets');
    expect(marketsOnly.body.events[0]).not.toHaveProperty('analytics');
    const analyticsOnly = await api.get('/api/events?series_ticker=NTS&with_analytics=true&with_nested_markets=false');
    expect(analyticsOnly.body.events[0]).toHaveProperty('analytics');
    expect(analyticsOnly.body.events[0]).not.toHaveProperty('markets');
  });

  it('clamps limit at 100 and refuses malformed values with 400', async () => {
    expect((await api.get('/api/events?limit=1000')).body.events).toHaveLength(100);
    expect((await api.get('/api/events?limit=3')).body.events).toHaveLength(3);
    for (const query of ['limit=0', 'limit=abc', 'limit=-1', 'status=active', 'status=OPEN', `status=${SQL}`, 'with_nested_markets=maybe', 'with_analytics=2', 'status=ACTIVE&status=CLOSED']) {
      const response = await api.get(`/api/events?${query}`);
      expect(response.status, query).toBe(400);
      expect(response.body.error.code).toBe('invalid_request');
    }
  });

  it('refuses tampered and foreign cursors with 400; an empty one starts at the first page', async () => {
    const first = await api.get('/api/events?limit=2');
    const cursor = first.body.cursor as string;
    const series = (await api.get('/api/series?limit=1')).body.cursor as string;
    for (const bad of [tamper(cursor), series, 'not-a-cursor', cursor.slice(0, -6), `${cursor}!`, HUGE.slice(0, 1000)]) {
      const response = await api.get(`/api/events?cursor=${enc(bad)}`);
      expect(response.status).toBe(400);
    }
    expect((await api.get(`/api/events?cursor=${HUGE}`)).status).toBe(400);
    const empty = await api.get('/api/events?limit=2&cursor=');
    expect(empty.body).toEqual(first.body);
  });

  it('answers unknown, hostile or huge filter values with an empty page', async () => {
    for (const value of ['NOPE', SQL, 'X'.repeat(64), '%25', enc('NTS%')]) {
      const response = await api.get(`/api/events?series_ticker=${value}`);
      expect(response.status).toBe(200);
      expect(response.body).toEqual({ cursor: null, events: [] });
    }
    await expectNulRefused('/api/events?series_ticker=%00', "query parameter 'series_ticker'");
    // no ticker is longer than 64 characters
    expect((await api.get(`/api/events?series_ticker=${HUGE}`)).status).toBe(400);
    expect((await api.get(`/api/events?series_ticker=${'X'.repeat(65)}`)).status).toBe(400);
  });
});

describe('GET /api/events/{event_ticker}', () => {
  it('returns the event with its analytics by default, without markets', async () => {
    const response = await api.get('/api/events/NTS-E1');
    expect(response.status).toBe(200);
    expect(Object.keys(response.body).sort()).toEqual(['analytics', 'event']);
    expect(response.body.event).toEqual({
      id: expect.any(String),
      eventTicker: 'NTS-E1',
      seriesTicker: 'NTS',
      title: 'Native NTS-E1',
      mutuallyExclusive: false,
      strikeDate: '2030-01-01T00:00:00.000Z',
      description: 'About NTS-E1',
      status: 'ACTIVE',
      createdAt: '2020-01-01T00:00:00.123Z',
      updatedAt: '2020-01-01T00:00:00.123Z',
    });
    expect(response.body.analytics).toEqual({
      marketCount: 5,
      activeCount: 1,
      closedCount: 1,
      resolvedCount: 3,
      unresolvedCount: 2,
      resolvedYesCount: 1,
      resolvedNoCount: 1,
      invalidCount: 1,
      totalVolume: '30.5',
      totalLiquidity: '5',
      yesPriceSum: '1.55',
      avgYesPrice: '0.3875',
      minYesPrice: '0.1',
      maxYesPrice: '0.75',
    });
  });

  it('adds markets on request and leaves analytics out on request; the ticker is case-insensitive', async () => {
    const both = await api.get('/api/events/nts-e1?with_nested_markets=true');
    expect(both.body.event.eventTicker).toBe('NTS-E1');
    expect(both.body.markets.map((m: { ticker: string; status: string }) => `${m.ticker}:${m.status}`)).toEqual([
      'NTS-E1-M1:ACTIVE',
      'NTS-E1-M2:CLOSED',
      'NTS-E1-M3:RESOLVED',
      'NTS-E1-M4:RESOLVED',
      'NTS-E1-M5:RESOLVED',
    ]);
    // never traded: the documented default in both frames
    expect(both.body.markets[3]).toMatchObject({ lastYesPrice: '0', lastNoPrice: '0', volume: '0' });
    expect(both.body).toHaveProperty('analytics');

    const bare = await api.get('/api/events/NTS-E1?with_analytics=false');
    expect(Object.keys(bare.body)).toEqual(['event']);
    const marketsOnly = await api.get('/api/events/NTS-E1?with_analytics=false&with_nested_markets=true');
    expect(Object.keys(marketsOnly.body).sort()).toEqual(['event', 'markets']);
  });

  it('gives an event without markets zero counts, sums and price rollups', async () => {
    const response = await api.get('/api/events/NTS-E2?with_nested_markets=true');
    expect(response.body.markets).toEqual([]);
    expect(response.body.analytics).toEqual({
      marketCount: 0,
      activeCount: 0,
      closedCount: 0,
      resolvedCount: 0,
      unresolvedCount: 0,
      resolvedYesCount: 0,
      resolvedNoCount: 0,
      invalidCount: 0,
      totalVolume: '0',
      totalLiquidity: '0',
      yesPriceSum: '0',
      avgYesPrice: '0',
      minYesPrice: '0',
      maxYesPrice: '0',
    });
  });

  it('agrees with the generated catalogue: analytics add up for every demo event of a page', async () => {
    const page = await api.get('/api/events?limit=100&with_analytics=true&with_nested_markets=true');
    for (const event of page.body.events) {
      const a = event.analytics;
      expect(a.marketCount).toBe(event.markets.length);
      expect(a.activeCount + a.closedCount + a.resolvedCount).toBe(a.marketCount);
      expect(a.resolvedYesCount + a.resolvedNoCount + a.invalidCount).toBe(a.resolvedCount);
      expect(a.unresolvedCount).toBe(a.marketCount - a.resolvedCount);
      const single = await api.get(`/api/events/${event.eventTicker}`);
      expect(single.body.analytics).toEqual(a);
    }
  });

  it('answers 404 for unknown, hostile or huge tickers and 400 for malformed flags', async () => {
    for (const ticker of ['NOPE', SQL, 'X'.repeat(64)]) {
      const response = await api.get(`/api/events/${ticker}`);
      expect(response.status, ticker.slice(0, 20)).toBe(404);
      expect(response.body.error.code).toBe('not_found');
    }
    for (const ticker of ['%00', 'NTS-E1%00']) await expectNulRefused(`/api/events/${ticker}`, "path parameter 'event_ticker'");
    expect((await api.get(`/api/events/${HUGE}`)).status).toBe(400);
    expect((await api.get('/api/events/NTS-E1?with_analytics=yes-please')).status).toBe(400);
    expect((await api.get('/api/events/%E0%A4%A')).status).toBe(400);
  });
});

describe('GET /api/series and /api/series/{series_ticker}', () => {
  it('lists series newest first and walks them all once', async () => {
    const first = await api.get('/api/series');
    expect(first.status).toBe(200);
    const expected = await newestFirst('series');
    expect(first.body.series.map((s: { ticker: string }) => s.ticker)).toEqual(expected.slice(0, 20));
    const { keys } = await walk('/api/series?limit=7', 'series', 'ticker');
    expect(keys).toEqual(expected);
    expect((await api.get('/api/series?limit=500')).body.series).toHaveLength(Math.min(100, expected.length));
  });

  it('filters by category slug, case-insensitively; unknown categories give an empty page', async () => {
    const response = await api.get('/api/series?category=Native-Tests');
    expect(response.body.series.map((s: { ticker: string }) => s.ticker)).toEqual(['NTS']);
    expect(response.body.cursor).toBeNull();
    const economics = await newestFirst('series', (q) => q.whereIn('category_id', api.db('categories').select('id').where({ slug: 'economics' })));
    expect(economics.length).toBeGreaterThan(0);
    expect((await walk('/api/series?category=economics&limit=2', 'series', 'ticker')).keys).toEqual(economics);
    for (const value of ['nope', SQL, 'x'.repeat(100)]) {
      expect((await api.get(`/api/series?category=${value}`)).body).toEqual({ cursor: null, series: [] });
    }
    await expectNulRefused('/api/series?category=%00', "query parameter 'category'");
    expect((await api.get(`/api/series?category=${HUGE}`)).status).toBe(400);
  });

  it('refuses malformed limits and cursors', async () => {
    const events = (await api.get('/api/events?limit=1')).body.cursor as string;
    const cursor = (await api.get('/api/series?limit=1')).body.cursor as string;
    for (const query of ['limit=0', 'limit=x', `cursor=${enc(events)}`, `cursor=${enc(tamper(cursor))}`, 'cursor=%00']) {
      expect((await api.get(`/api/series?${query}`)).status, query).toBe(400);
    }
  });

  it('reads one series in the native shape, case-insensitively; 404 when unknown', async () => {
    const response = await api.get('/api/series/nts');
    expect(response.status).toBe(200);
    expect(response.body).toEqual({
      series: {
        id: expect.any(String),
        ticker: 'NTS',
        title: 'Native test series',
        categoryId: fixture.categoryId,
        category_name: 'Native Tests',
        category_slug: 'native-tests',
        frequency: 'weekly',
        tags: ['nt-alpha', 'nt-beta'],
        description: 'Fixtures',
        event_count: 4,
        createdAt: '2020-01-01T00:00:00.123Z',
        updatedAt: '2020-01-01T00:00:00.123Z',
      },
    });
    const listed = (await api.get('/api/series?category=native-tests')).body.series[0];
    expect(listed).toEqual(response.body.series);
    for (const ticker of ['NOPE', SQL, 'X'.repeat(64)]) expect((await api.get(`/api/series/${ticker}`)).status).toBe(404);
    await expectNulRefused('/api/series/%00', "path parameter 'series_ticker'");
    expect((await api.get(`/api/series/${HUGE}`)).status).toBe(400);
  });
});

describe('GET /api/tags/{slug}', () => {
  it('returns the tag and the tags sharing its markets, most shared first', async () => {
    const response = await api.get('/api/tags/nt-alpha');
    expect(response.status).toBe(200);
    expect(response.body.tag).toEqual({
      id: fixture.tagIds['nt-alpha'],
      slug: 'nt-alpha',
      name: 'NT alpha',
      market_count: 3,
      created_at: expect.stringMatching(/Z$/),
      updated_at: expect.stringMatching(/Z$/),
    });
    // nt-beta shares 3 markets with nt-alpha, nt-gamma 1; nt-lonely and nt-unused none
    expect(response.body.related).toEqual([
      { id: fixture.tagIds['nt-beta'], slug: 'nt-beta', name: 'NT beta', market_count: 3 },
      { id: fixture.tagIds['nt-gamma'], slug: 'nt-gamma', name: 'NT gamma', market_count: 2 },
    ]);
    // ties on shared markets go by id: nt-alpha and nt-beta each share one market with nt-gamma
    const gamma = await api.get('/api/tags/NT-GAMMA');
    expect(gamma.body.related.map((t: { slug: string }) => t.slug)).toEqual(['nt-alpha', 'nt-beta']);
    expect((await api.get('/api/tags/nt-lonely')).body.related).toEqual([]);
    expect((await api.get('/api/tags/nt-unused')).body).toMatchObject({ tag: { market_count: 0 }, related: [] });
  });

  it('caps related tags at 20, ranked by shared markets, with their total market counts', async () => {
    const response = await api.get('/api/tags/elections');
    expect(response.status).toBe(200);
    const expected = await api.db.raw(`
      select t.slug, count(*)::int as shared,
             (select count(*)::int from market_tags x where x.tag_id = t.id) as total
        from market_tags a join market_tags b on b.market_id = a.market_id join tags t on t.id = b.tag_id
       where a.tag_id = (select id from tags where slug = 'elections') and b.tag_id <> a.tag_id
       group by t.id, t.slug order by shared desc, t.id limit 20`);
    expect(expected.rows.length).toBeGreaterThan(10);
    expect(response.body.related.map((t: { slug: string; market_count: number }) => `${t.slug}:${t.market_count}`)).toEqual(
      expected.rows.map((r: { slug: string; total: number }) => `${r.slug}:${r.total}`),
    );
  });

  it('keeps the 20 most shared of more related tags', async () => {
    const slugs = Array.from({ length: 25 }, (_, i) => `nt-r${String(i + 1).padStart(2, '0')}`);
    const ids = (await api.db('tags').insert([{ slug: 'nt-hub', label: 'Hub' }, ...slugs.map((slug) => ({ slug, label: slug }))]).returning('id')).map((r: { id: string }) => String(r.id));
    const [hub, ...others] = ids;
    const markets = (await api.db('markets').select('id').where('ticker', 'like', 'KXTREASURYYI0-1-M%').orderBy('id')).map((r: { id: string }) => r.id);
    expect(markets.length).toBeGreaterThanOrEqual(2);
    try {
      // every other tag shares the first market with the hub; nt-r25 and nt-r13 also the second
      await api.db('market_tags').insert([
        ...markets.slice(0, 2).map((market_id: string) => ({ market_id, tag_id: hub })),
        ...others.map((tag_id) => ({ market_id: markets[0], tag_id })),
        { market_id: markets[1], tag_id: others[24] },
        { market_id: markets[1], tag_id: others[12] },
      ]);
      const response = await api.get('/api/tags/nt-hub');
      const related = response.body.related.map((t: { slug: string }) => t.slug);
      expect(related).toHaveLength(20);
      // the first market's generated tags share it too; they rank among the ties by id, before nt-r*
      const generated = (await api.db('market_tags as mt').join('tags as t', 't.id', 'mt.tag_id').where('mt.market_id', markets[0]).whereNotIn('t.id', ids).orderBy('t.id').select('t.slug')).map((r: { slug: string }) => r.slug);
      const twice = (await api.db('market_tags as mt').join('tags as t', 't.id', 'mt.tag_id').where('mt.market_id', markets[1]).whereNotIn('t.id', ids).select('t.slug')).map((r: { slug: string }) => r.slug);
      const shared2 = ['nt-r13', 'nt-r25', ...generated.filter((g: string) => twice.includes(g))];
      expect(new Set(related.slice(0, shared2.length))).toEqual(new Set(shared2));
      expect(related.slice(shared2.length)).toEqual([...generated.filter((g: string) => !twice.includes(g)), ...slugs.filter((x) => x !== 'nt-r13' && x !== 'nt-r25')].slice(0, 20 - shared2.length));
      expect(response.body.tag).toMatchObject({ slug: 'nt-hub', market_count: 2 });
    } finally {
      await api.db('tags').whereIn('id', ids).delete();
    }
  });

  it('answers 404 for unknown, hostile or huge slugs', async () => {
    for (const slug of ['nope', SQL, 'x'.repeat(100)]) {
      const response = await api.get(`/api/tags/${slug}`);
      expect(response.status).toBe(404);
    }
    await expectNulRefused('/api/tags/%00', "path parameter 'slug'");
    expect((await api.get(`/api/tags/${HUGE}`)).status).toBe(400);
  });
});

describe('GET /api/markets', () => {
  it('answers in page mode by default: 20 markets newest first and the page envelope', async () => {
    const response = await api.get('/api/markets');
    expect(response.status).toBe(200);
    const expected = await newestFirst('markets');
    expect(Object.keys(response.body).sort()).toEqual(['markets', 'page', 'total', 'totalPages']);
    expect(response.body.markets.map((m: { ticker: string }) => m.ticker)).toEqual(expected.slice(0, 20));
    expect(response.body).toMatchObject({ total: expected.length, page: 1, totalPages: Math.ceil(expected.length / 20) });

    const page3 = await api.get('/api/markets?page=3&limit=50');
    expect(page3.body.markets.map((m: { ticker: string }) => m.ticker)).toEqual(expected.slice(100, 150));
    expect(page3.body).toMatchObject({ total: expected.length, page: 3, totalPages: Math.ceil(expected.length / 50) });
    const last = await api.get(`/api/markets?page=${Math.ceil(expected.length / 100)}&limit=100`);
    expect(last.body.markets.map((m: { ticker: string }) => m.ticker)).toEqual(expected.slice(Math.floor((expected.length - 1) / 100) * 100));
    expect((await api.get('/api/markets?limit=1000')).body).toMatchObject({ totalPages: Math.ceil(expected.length / 100) });
    expect((await api.get('/api/markets?limit=1000')).body.markets).toHaveLength(100);
  });

  it('returns empty pages past the end and past the scan window, still counting every match', async () => {
    const total = (await newestFirst('markets')).length;
    for (const page of [1000, 501, 1_000_000, 1e15]) {
      const response = await api.get(`/api/markets?page=${page}&limit=20`);
      expect(response.status).toBe(200);
      expect(response.body).toEqual({ markets: [], total, page, totalPages: Math.ceil(total / 20) });
    }
  });

  it('reads pages within the first 10,000 markets only (the scan window)', async () => {
    const [event] = await api.db('events').insert({ ticker: 'NTW-E1', slug: 'ntw-e1', series_id: api.db('series').select('id').where({ ticker: 'NTX' }), title: 'Window', start_date: OLDER, strike_date: OLD }).returning('id');
    await api.db.raw(`insert into markets (ticker, event_id, title, created_at) select 'NTW-E1-M' || g, ?, 'Window ' || g, '2001-01-01' from generate_series(1, 10050) g`, [event.id]);
    try {
      const expected = await newestFirst('markets');
      expect(expected.length).toBeGreaterThan(10_050);
      const tickers = (body: { markets: Array<{ ticker: string }> }) => body.markets.map((m) => m.ticker);
      expect(tickers((await api.get('/api/markets?page=500&limit=20')).body)).toEqual(expected.slice(9_980, 10_000));
      expect(tickers((await api.get('/api/markets?page=100&limit=100')).body)).toEqual(expected.slice(9_900, 10_000));
      // the page that crosses the window is cut at it
      const cut = await api.get('/api/markets?page=334&limit=30');
      expect(tickers(cut.body)).toEqual(expected.slice(9_990, 10_000));
      expect(cut.body).toMatchObject({ total: expected.length, page: 334, totalPages: Math.ceil(expected.length / 30) });
      expect(await api.get('/api/markets?page=501&limit=20')).toMatchObject({ body: { markets: [], total: expected.length } });
      // cursor mode is not bound by the window
      const deep = await walk('/api/markets?series_ticker=NTX&limit=100', 'markets', 'ticker');
      expect(deep.keys).toHaveLength(10_050);
      expect(new Set(deep.keys).size).toBe(10_050);
    } finally {
      await api.db('markets').where({ event_id: event.id }).delete();
      await api.db('events').where({ id: event.id }).delete();
    }
  });

  it('filters by status and by tickers (repeated, comma-separated, both spellings) in page mode', async () => {
    const closed = await newestFirst('markets', (q) => q.where({ status: 'CLOSED' }));
    const response = await api.get('/api/markets?status=CLOSED&limit=100');
    expect(response.body.total).toBe(closed.length);
    expect(response.body.markets.map((m: { ticker: string }) => m.ticker)).toEqual(closed.slice(0, 100));
    expect(response.body.markets.every((m: { status: string }) => m.status === 'CLOSED')).toBe(true);

    const picked = await api.get(`/api/markets?ticker=nts-e1-m1,NTS-E1-M3&tickers=NTS-E3-M1&ticker=NOPE,${'X'.repeat(60)}`);
    expect(picked.body).toMatchObject({ total: 3, page: 1, totalPages: 1 });
    expect(picked.body.markets.map((m: { ticker: string }) => m.ticker)).toEqual(['NTS-E3-M1', 'NTS-E1-M3', 'NTS-E1-M1']);
    expect(picked.body.markets[1]).toMatchObject({ status: 'RESOLVED', result: 'yes', lastYesPrice: '0.50', eventTicker: 'NTS-E1' });
    expect((await api.get('/api/markets?tickers=NTS-E1-M1&status=ACTIVE')).body.total).toBe(1);
    expect((await api.get('/api/markets?tickers=NTS-E1-M1&status=CLOSED')).body).toEqual({ markets: [], total: 0, page: 1, totalPages: 0 });
    expect((await api.get(`/api/markets?ticker=${SQL}`)).body).toMatchObject({ markets: [], total: 0 });
    await expectNulRefused('/api/markets?ticker=%00', "query parameter 'ticker'");
  });

  it('switches to cursor mode with cursor (even empty), event_ticker or series_ticker, and walks all markets', async () => {
    const expected = await newestFirst('markets');
    const first = await api.get('/api/markets?cursor=&limit=5&page=3');
    expect(Object.keys(first.body).sort()).toEqual(['cursor', 'markets']);
    expect(first.body.markets.map((m: { ticker: string }) => m.ticker)).toEqual(expected.slice(0, 5));
    const { keys } = await walk('/api/markets?limit=100', 'markets', 'ticker');
    expect(keys).toEqual(expected);

    const byEvent = await api.get('/api/markets?event_ticker=nts-e1');
    expect(byEvent.body).toEqual({ cursor: null, markets: expect.any(Array) });
    expect(byEvent.body.markets.map((m: { ticker: string }) => m.ticker).sort()).toEqual(['NTS-E1-M1', 'NTS-E1-M2', 'NTS-E1-M3', 'NTS-E1-M4', 'NTS-E1-M5']);
    // equal creation times: newest first falls back to id, descending
    expect(byEvent.body.markets.map((m: { ticker: string }) => m.ticker)).toEqual(['NTS-E1-M5', 'NTS-E1-M4', 'NTS-E1-M3', 'NTS-E1-M2', 'NTS-E1-M1']);
    const walked = await walk('/api/markets?event_ticker=NTS-E1&limit=2', 'markets', 'ticker');
    expect(walked).toEqual({ keys: ['NTS-E1-M5', 'NTS-E1-M4', 'NTS-E1-M3', 'NTS-E1-M2', 'NTS-E1-M1'], pages: 3 });

    const bySeries = await walk('/api/markets?series_ticker=NTS&limit=4', 'markets', 'ticker');
    expect(bySeries.keys).toEqual(['NTS-E3-M1', 'NTS-E1-M5', 'NTS-E1-M4', 'NTS-E1-M3', 'NTS-E1-M2', 'NTS-E1-M1']);
    const demoSeries = await walk('/api/markets?series_ticker=KXTREASURYYI0&status=CLOSED&limit=3', 'markets', 'ticker');
    const demoExpected = await newestFirst('markets', (q) =>
      q.where({ status: 'CLOSED' }).whereIn('event_id', api.db('events').select('id').whereIn('series_id', api.db('series').select('id').where({ ticker: 'KXTREASURYYI0' }))),
    );
    expect(demoExpected.length).toBeGreaterThan(0);
    expect(demoSeries.keys).toEqual(demoExpected);
    const both = await api.get('/api/markets?series_ticker=NTS&event_ticker=NTS-E3&tickers=NTS-E3-M1,NTS-E1-M1');
    expect(both.body.markets.map((m: { ticker: string }) => m.ticker)).toEqual(['NTS-E3-M1']);
    for (const value of ['NOPE', SQL, 'X'.repeat(64)]) {
      expect((await api.get(`/api/markets?event_ticker=${value}`)).body).toEqual({ cursor: null, markets: [] });
      expect((await api.get(`/api/markets?series_ticker=${value}`)).body).toEqual({ cursor: null, markets: [] });
    }
    for (const name of ['event_ticker', 'series_ticker']) await expectNulRefused(`/api/markets?${name}=%00`, `query parameter '${name}'`);
    for (const name of ['event_ticker', 'series_ticker']) expect((await api.get(`/api/markets?${name}=${HUGE}`)).status, name).toBe(400);
    for (const name of ['ticker', 'tickers']) {
      expect((await api.get(`/api/markets?${name}=${HUGE.slice(0, 5000)},${HUGE.slice(0, 4000)}`)).body, name).toEqual({ markets: [], total: 0, page: 1, totalPages: 0 });
    }
  });

  it('refuses malformed pages, limits, statuses and cursors with 400', async () => {
    const cursor = (await api.get('/api/markets?cursor=&limit=1')).body.cursor as string;
    const events = (await api.get('/api/events?limit=1')).body.cursor as string;
    for (const query of ['page=0', 'page=-1', 'page=one', 'page=1.5', 'limit=0', 'limit=many', 'status=OPEN', `status=${SQL}`, `cursor=${enc(tamper(cursor))}`, `cursor=${enc(events)}`, `cursor=${HUGE}`]) {
      const response = await api.get(`/api/markets?${query}`);
      expect(response.status, query.slice(0, 40)).toBe(400);
    }
  });
});

describe('GET /api/markets/{ticker}', () => {
  it('returns one market in the native shape, case-insensitively; 404 when unknown', async () => {
    const response = await api.get('/api/markets/nts-e1-m2');
    expect(response.status).toBe(200);
    expect(response.body.market).toEqual({
      id: expect.any(String),
      ticker: 'NTS-E1-M2',
      eventTicker: 'NTS-E1',
      title: 'Native market NTS-E1-M2',
      status: 'CLOSED',
      lastYesPrice: '0.75',
      lastNoPrice: '0.25',
      volume: '20.5',
      liquidity: '0',
      openInterest: '0',
      result: null,
      rewardsMinSize: null,
      rewardsMaxSpread: null,
      conditionId: expect.stringMatching(/^0x[0-9a-f]{64}$/),
      yesTokenId: expect.stringMatching(/^[0-9]{1,78}$/),
      noTokenId: expect.stringMatching(/^[0-9]{1,78}$/),
      createdAt: '2020-01-01T00:00:00.123Z',
      updatedAt: '2020-01-01T00:00:00.123Z',
    });
    for (const ticker of ['NOPE', SQL, 'X'.repeat(64)]) expect((await api.get(`/api/markets/${ticker}`)).status).toBe(404);
    await expectNulRefused('/api/markets/%00', "path parameter 'ticker'");
    expect((await api.get(`/api/markets/${HUGE}`)).status).toBe(400);
  });
});

describe('GET /api/search', () => {
  const search = async (q: string, extra = '') => {
    const response = await api.get(`/api/search?q=${enc(q)}${extra}`);
    expect(response.status).toBe(200);
    return response.body as { query: string; results: Array<{ kind: string; id: string; ticker: string; title: string; subtitle: string; href: string }> };
  };

  it('answers text shorter than two characters (after trimming) with no results, not an error', async () => {
    expect(await search('a')).toEqual({ query: 'a', results: [] });
    expect(await search('   x   ')).toEqual({ query: 'x', results: [] });
    expect(await search('')).toEqual({ query: '', results: [] });
    await expectNulRefused(`/api/search?q=${enc('\0n\0')}`, "query parameter 'q'");
    const missing = await api.get('/api/search');
    expect(missing.status).toBe(400);
    expect(missing.body.error.message).toContain("'q'");
  });

  it('finds with emoji in the text what it finds without them: they only separate words', async () => {
    const plain = await search('native market');
    expect(plain.results.length).toBeGreaterThan(3);
    expect((await search('😀 native🚀market 🇺🇸')).results).toEqual(plain.results);
  });

    it('ranks an exact ticker first, then prefix matches, with app routes', async () => {
    const body = await search('nts-e1');
    expect(body.query).toBe('nts-e1');
    expect(body.results[0]).toEqual({ kind: 'event', id: expect.any(String), ticker: 'NTS-E1', title: 'Native NTS-E1', subtitle: 'Native test series', href: '/events/NTS-E1' });
    expect(body.results.slice(1, 6).map((r) => `${r.kind}:${r.ticker}`)).toEqual([
      'market:NTS-E1-M1',
      'market:NTS-E1-M2',
      'market:NTS-E1-M3',
      'market:NTS-E1-M4',
      'market:NTS-E1-M5',
    ]);
    expect(body.results[1]).toMatchObject({ title: 'Native market NTS-E1-M1', subtitle: 'Native NTS-E1', href: '/markets/NTS-E1-M1' });

    const market = await search('NTS-E1-M4');
    expect(market.results[0]).toMatchObject({ kind: 'market', ticker: 'NTS-E1-M4' });

    const series = await search('NTS');
    expect(series.results[0]).toEqual({ kind: 'series', id: expect.any(String), ticker: 'NTS', title: 'Native test series', subtitle: 'Native Tests · weekly', href: '/series/NTS' });
    // then the items holding the word: events (fewer words) before markets; active first, then by volume
    expect(series.results.slice(1, 11).map((r) => `${r.kind}:${r.ticker}`)).toEqual([
      'event:NTS-E1',
      'event:NTS-E2',
      'event:NTS-E3',
      'event:NTS-E4',
      'market:NTS-E1-M1',
      'market:NTS-E1-M2',
      'market:NTS-E3-M1',
      'market:NTS-E1-M3',
      'market:NTS-E1-M4',
      'market:NTS-E1-M5',
    ]);
  });

  it('finds tags by slug and label, and trader profiles by username and name', async () => {
    const tag = await search('nt-lonely');
    expect(tag.results[0]).toEqual({ kind: 'tag', id: fixture.tagIds['nt-lonely'], ticker: 'nt-lonely', title: 'NT lonely', subtitle: 'Tag', href: '/tags/nt-lonely' });
    const label = await search('NT GAMMA');
    expect(label.results[0]).toMatchObject({ kind: 'tag', ticker: 'nt-gamma' });

    const profile = await search('NTrader');
    expect(profile.results[0]).toEqual({ kind: 'profile', id: expect.any(String), ticker: 'ntrader', title: 'Native Trader', subtitle: '@ntrader', href: '/profile/ntrader' });
    expect((await search('native trader')).results[0]).toMatchObject({ kind: 'profile', ticker: 'ntrader' });
    // an account without a name shows its username as the title
    expect((await search('nobodyname')).results[0]).toMatchObject({ kind: 'profile', title: 'nobodyname' });
    // text in the middle of a title is found too
    expect((await search('market nts-e3')).results.map((r) => r.ticker)).toContain('NTS-E3-M1');
    expect((await search('onely')).results.map((r) => r.ticker)).toContain('nt-lonely');
  });

  it("matches words in any order, punctuation ignored, in an item's parents' text too, and follows a renamed series", async () => {
    const kindTickers = async (q: string) => (await search(q)).results.map((r) => `${r.kind}:${r.ticker}`);
    // The event's own ticker and its series' title, words in another order and with punctuation.
    expect((await kindTickers('series, native: #nts-e2'))[0]).toBe('event:NTS-E2');
    expect(await kindTickers('e2 nts zzzqx')).toEqual([]);
    const before = await api.db('series').where({ ticker: 'NTS' }).first('title');
    await api.db('series').where({ ticker: 'NTS' }).update({ title: 'Renamed zebra series' });
    try {
      // The new word reaches the series' events and their markets; the old one is gone.
      expect(await kindTickers('zebra nts-e1-m1')).toEqual(['market:NTS-E1-M1']);
      expect((await kindTickers('zebra NTS-E3'))[0]).toBe('event:NTS-E3');
      expect(await kindTickers('test series nts-e1-m1')).toEqual([]);
    } finally {
      await api.db('series').where({ ticker: 'NTS' }).update({ title: before.title });
    }
    expect(await kindTickers('test series nts-e1-m1')).toEqual(['market:NTS-E1-M1']);
  });

  it('ranks every kind that matches, exact matches before prefix matches before the rest', async () => {
    const body = await search('treasury', '&limit=30');
    expect(body.results.length).toBeGreaterThan(12);
    const tiers = body.results.map((r) => (r.title.toLowerCase().startsWith('treasury') || r.ticker.toLowerCase().startsWith('treasury') ? 1 : 2));
    expect(tiers).toEqual([...tiers].sort());
    expect(body.results[0]).toMatchObject({ kind: 'series', ticker: 'KXTREASURYYI0' });
    expect(new Set(body.results.map((r) => r.kind))).toEqual(new Set(['series', 'event', 'market']));
  });

  it('defaults to 12 results and clamps the limit at 30', async () => {
    expect((await search('kx')).results).toHaveLength(12);
    expect((await search('kx', '&limit=30')).results).toHaveLength(30);
    expect((await search('kx', '&limit=1000')).results).toHaveLength(30);
    expect((await search('kx', '&limit=3')).results).toHaveLength(3);
    for (const limit of ['0', 'x', '-5']) expect((await api.get(`/api/search?q=kx&limit=${limit}`)).status).toBe(400);
  });

  it('cuts a 10,000-character text to 100 characters and answers quickly', async () => {
    const started = Date.now();
    const body = await search(`treasury ${'y'.repeat(10_000)}`);
    expect(body.query).toBe(`treasury ${'y'.repeat(91)}`);
    expect(Date.now() - started).toBeLessThan(2000);
    const random = await search(Array.from({ length: 10_000 }, (_, i) => String.fromCharCode(33 + ((i * 7) % 90))).join(''));
    expect(random.query).toHaveLength(100);
  });

  it('treats SQL and LIKE metacharacters as plain text', async () => {
    for (const q of ["' or 1=1 --", '%', '%%', '__', '\\', "'; drop table markets; --", 'NTS%', 'N_S-E1', '100%', '%00']) {
      const body = await search(q);
      expect(body.query).toBe(q.trim());
    }
    // no letter or digit: nothing to find (and no wildcard)
    expect((await search('%%')).results).toEqual([]);
    expect((await search('__')).results).toEqual([]);
    expect((await search("' --")).results).toEqual([]);
    expect(await api.db('markets').where({ ticker: 'NTS-E1-M1' }).first()).toBeDefined();
  });

  it('runs on connections of their own (each search), planned without values and with sequential scans off; the rest of the service keeps both', async () => {
    const settings = async (db: typeof api.db) =>
      (await db.raw(`select current_setting('plan_cache_mode') as plans, current_setting('enable_seqscan') as seqscan`)).rows[0];
    expect(await settings(api.service.pools.catalogueSearchDb)).toEqual({ plans: 'force_generic_plan', seqscan: 'off' });
    expect(await settings(api.service.pools.publicSearchDb)).toEqual({ plans: 'force_generic_plan', seqscan: 'off' });
    expect(await settings(api.db)).toEqual({ plans: 'auto', seqscan: 'on' });
  });
});

describe('counters kept by triggers (migration 0003)', () => {
  const pairsFromScratch = async () =>
    (await api.db.raw(`select a.tag_id::text || '/' || b.tag_id::text || '=' || count(*) as p from market_tags a join market_tags b on b.market_id = a.market_id group by a.tag_id, b.tag_id order by a.tag_id, b.tag_id`)).rows.map((r: { p: string }) => r.p);
  const pairsKept = async () =>
    (await api.db.raw(`select tag_id::text || '/' || other_tag_id::text || '=' || markets as p from tag_market_pairs where markets > 0 order by tag_id, other_tag_id`)).rows.map((r: { p: string }) => r.p);
  const totals = async () => {
    const out: Record<string, number> = {};
    for (const status of ['ACTIVE', 'CLOSED', 'RESOLVED']) out[status] = (await api.get(`/api/markets?status=${status}&limit=1`)).body.total;
    out.all = (await api.get('/api/markets?limit=1')).body.total;
    return out;
  };
  const counted = async () => {
    const rows = await api.db('markets').select('status').count<Array<{ status: string; count: string }>>('* as count').groupBy('status');
    const out: Record<string, number> = { ACTIVE: 0, CLOSED: 0, RESOLVED: 0 };
    let all = 0;
    for (const row of rows) {
      out[row.status] = Number(row.count);
      all += Number(row.count);
    }
    return { ...out, all };
  };

  it('keep market totals per status and shared markets per tag pair exact through inserts, updates and deletes', async () => {
    expect(await totals()).toEqual(await counted());
    expect(await pairsKept()).toEqual(await pairsFromScratch());

    const eventId = (await api.db('events').where({ ticker: 'NTS-E2' }).first()).id;
    const tagIds = fixture.tagIds;
    const inserted = await api.db('markets')
      .insert([1, 2, 3].map((i) => ({ ticker: `NTS-E2-C${i}`, event_id: eventId, title: `Counter ${i}` })))
      .returning('id');
    const [c1, c2, c3] = inserted.map((r: { id: string }) => String(r.id)) as [string, string, string];
    await api.db('market_tags').insert([
      { market_id: c1, tag_id: tagIds['nt-alpha'] },
      { market_id: c1, tag_id: tagIds['nt-unused'] },
      { market_id: c2, tag_id: tagIds['nt-unused'] },
    ]);
    // one statement adding tags to a market that already has some, and to another
    await api.db('market_tags').insert([
      { market_id: c1, tag_id: tagIds['nt-gamma'] },
      { market_id: c2, tag_id: tagIds['nt-alpha'] },
      { market_id: c3, tag_id: tagIds['nt-gamma'] },
    ]);
    expect(await pairsKept()).toEqual(await pairsFromScratch());
    expect((await api.get('/api/tags/nt-unused')).body.related.map((t: { slug: string }) => t.slug)).toEqual(['nt-alpha', 'nt-gamma']);
    expect(await totals()).toEqual(await counted());

    await api.db('markets').whereIn('id', [c1, c2]).update({ status: 'CLOSED' });
    await api.db('markets').where({ id: c3 }).update({ status: 'RESOLVED', result: 'no' });
    await api.db('markets').where({ id: c3 }).update({ volume: '12' }); // no status change
    expect(await totals()).toEqual(await counted());

    await api.db('market_tags').where({ market_id: c1, tag_id: tagIds['nt-alpha'] }).delete();
    expect(await pairsKept()).toEqual(await pairsFromScratch());
    await api.db('market_tags').where({ market_id: c2, tag_id: tagIds['nt-unused'] }).update({ tag_id: tagIds['nt-lonely'] });
    expect(await pairsKept()).toEqual(await pairsFromScratch());
    await api.db('markets').where({ id: c1 }).delete(); // its tag links go by cascade
    expect(await pairsKept()).toEqual(await pairsFromScratch());
    expect(await totals()).toEqual(await counted());

    const [temp] = await api.db('tags').insert({ slug: 'nt-temp', label: 'Temp' }).returning('id');
    await api.db('market_tags').insert([{ market_id: c2, tag_id: temp.id }, { market_id: c3, tag_id: temp.id }]);
    expect((await api.get('/api/tags/nt-temp')).body.tag.market_count).toBe(2);
    await api.db('tags').where({ id: temp.id }).delete(); // its market links go by cascade
    expect(await pairsKept()).toEqual(await pairsFromScratch());

    await api.db('markets').whereIn('id', [c2, c3]).delete();
    expect(await pairsKept()).toEqual(await pairsFromScratch());
    expect(await totals()).toEqual(await counted());
    expect((await api.get('/api/tags/nt-unused')).body).toMatchObject({ tag: { market_count: 0 }, related: [] });
  });
});

describe('the document', () => {
  it('describes an event list item with exactly the fields of Event, plus markets and analytics', async () => {
    const doc = JSON.parse(await readFile(new URL('../../openapi/dist/openapi.json', import.meta.url), 'utf8'));
    const { Event, EventListItem } = doc.components.schemas;
    const { markets, analytics, ...fields } = EventListItem.properties;
    expect(markets).toBeDefined();
    expect(analytics).toBeDefined();
    expect(fields).toEqual(Event.properties);
    expect(EventListItem.required).toEqual(Event.required);
  });
});

/* eslint max-lines: ["error", { "max": 700, "skipBlankLines": true, "skipComments": true }] -- its cases share one running service (an embedded PostgreSQL) and its fixtures: a split would start another */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { TestService } from '../support/service.js';

/**
 * Compatibility series, tags and public search,
 * on a small hand-made catalogue whose every value is known, plus 10,050 bare series (frequency `scan`)
 * for clamping and the offset scan window.
 */

let api: TestService;

const at = (iso: string) => new Date(iso);
const OFFSET_TS = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}\+00:00$/;

interface Fixture {
  categories: Record<string, string>;
  tags: Record<string, string>;
  series: Record<string, string>;
  events: Record<string, string>;
}
const ids: Fixture = { categories: {}, tags: {}, series: {}, events: {} };

async function insert(table: string, row: Record<string, unknown>): Promise<string> {
  const [inserted] = await api.db(table).insert(row).returning('id');
  return String(inserted.id);
}

/** The three series of the fixture, as the tests expect to see them. */
const SERIES = [
  { key: 'fed', ticker: 'KXFEDX', slug: 'kxfedx', title: 'Fed decisions', category: 'economics', frequency: 'monthly', series_type: 'recurring', created_at: at('2026-01-01T00:00:00Z'), updated_at: at('2026-04-01T00:00:00Z'), tags: ['fed'] },
  { key: 'elec', ticker: 'KXELECX', slug: 'kxelecx', title: 'Approval rating', category: 'politics', frequency: 'weekly', series_type: 'single', created_at: at('2026-01-03T00:00:00Z'), updated_at: at('2026-02-01T00:00:00Z'), tags: ['elections', 'fed'] },
  { key: 'btc', ticker: 'KXBTCX', slug: 'kxbtcx', title: 'Bitcoin price', category: 'economics', frequency: 'daily', series_type: 'recurring', created_at: at('2026-01-02T00:00:00Z'), updated_at: at('2026-03-01T00:00:00Z'), tags: [] },
] as const;

/** Events: [series, ticker, title, status, start, volume, liquidity, tags]. */
const EVENTS = [
  ['fed', 'KXFEDX-JAN', 'Fed January decision', 'RESOLVED', '2026-01-05T10:00:00Z', '100.5', '0', ['fed']],
  ['fed', 'KXFEDX-MAR', 'Fed March decision', 'ACTIVE', '2026-03-02T23:30:00Z', '200.25', '50.5', ['fed', 'elections']],
  ['fed', 'KXFEDX-FEB', 'Fed February decision', 'ACTIVE', '2026-02-10T08:00:00Z', '0.25', '10', ['fed']],
  ['fed', 'KXFEDX-FEB2', 'Fed February minutes', 'CLOSED', '2026-02-10T20:00:00Z', '0', '0', []],
  ['elec', 'KXELECX-1', 'Approval above 50', 'CLOSED', '2025-12-22T12:00:00Z', '5', '0', ['elections']],
  ['elec', 'KXELECX-2', 'Approval above 45', 'RESOLVED', '2026-01-06T12:00:00Z', '7', '0', ['elections']],
  ['btc', 'KXBTCX-1', 'Bitcoin above 100k', 'ACTIVE', '2026-02-01T00:00:00Z', '1000', '300', ['bitcoin']],
  ['btc', 'BITCOIN', 'Will the coin moon', 'ACTIVE', '2026-02-02T00:00:00Z', '1', '1', ['bitcoin']],
  ['btc', 'KXBTCX-3', 'Who holds bitcoin', 'RESOLVED', '2026-02-03T00:00:00Z', '1', '1', ['bitcoin', 'fed']],
] as const;

beforeAll(async () => {
  api = await TestService.start();
  for (const [slug, name] of [['economics', 'Economics'], ['politics', 'Politics'], ['other', 'Other']]) {
    ids.categories[slug!] = await insert('categories', { slug, name });
  }
  for (const [slug, label, createdBy] of [['fed', 'Fed', 7], ['elections', 'Elections', null], ['bitcoin', 'Bitcoin', null], ['unused', 'Unused tag', null]] as const) {
    ids.tags[slug] = await insert('tags', {
      slug,
      label,
      created_by: createdBy,
      updated_by: createdBy === null ? null : 9,
      is_carousel: slug === 'bitcoin',
      published_at: at('2026-01-01T12:00:00Z'),
      created_at: at('2026-01-01T12:00:00Z'),
      updated_at: at('2026-01-02T12:00:00Z'),
    });
  }
  for (const s of SERIES) {
    ids.series[s.key] = await insert('series', {
      ticker: s.ticker, slug: s.slug, title: s.title, category_id: ids.categories[s.category], frequency: s.frequency,
      series_type: s.series_type, description: `${s.title}.`, created_at: s.created_at, updated_at: s.updated_at,
    });
    for (const tag of s.tags) await api.db('series_tags').insert({ series_id: ids.series[s.key], tag_id: ids.tags[tag] });
  }
  const author = (await api.register({ username: 'author' })).user.id;
  for (const [series, ticker, title, status, start, volume, liquidity, tags] of EVENTS) {
    const id = await insert('events', {
      ticker, slug: ticker.toLowerCase(), series_id: ids.series[series], title, status, start_date: at(start),
      strike_date: at('2026-12-31T00:00:00Z'), volume, liquidity, created_at: at(start), updated_at: at(start),
    });
    ids.events[ticker] = id;
    for (const tag of tags) await api.db('event_tags').insert({ event_id: id, tag_id: ids.tags[tag] });
    const market = await insert('markets', { ticker: `${ticker}-M1`, event_id: id, title: `${title} market`, status: status === 'RESOLVED' ? 'CLOSED' : status });
    // Comments on the fed series: 2 visible + 1 hidden on KXFEDX-MAR, 1 visible on KXFEDX-JAN.
    if (ticker === 'KXFEDX-MAR') {
      await api.db('comments').insert([
        { market_id: market, author_id: author, body: 'a' },
        { market_id: market, author_id: author, body: 'b' },
        { market_id: market, author_id: author, body: 'hidden', hidden: true },
      ]);
    }
    if (ticker === 'KXFEDX-JAN') await api.db('comments').insert({ market_id: market, author_id: author, body: 'c' });
  }
  // Bare series for clamping and the scan window: 10,050 of frequency `scan`, in category `other`.
  await api.db.raw(
    `insert into series (ticker, slug, title, category_id, frequency, created_at)
     select 'SCAN' || g, 'scan-' || g, 'Scan ' || g, ?, 'scan', timestamptz '2025-01-01' + g * interval '1 second' from generate_series(1, 10050) g`,
    [ids.categories.other!],
  );
  await api.register({ username: 'fed_watcher', name: 'Jerome Follower' });
  await api.register({ username: 'chartist', name: 'Fed Chartist' });
}, 120_000);
afterAll(() => api?.stop());

const get = (path: string) => api.get(path);
const tickers = (body: Array<{ ticker: string }>) => body.map((s) => s.ticker);
const FIXTURE_SLUGS = 'slug=KXFEDX,KXELECX,KXBTCX';

describe('GET /series', () => {
  it('lists compatibility series as a bare array, newest first, with their tags', async () => {
    const response = await get(`/series?${FIXTURE_SLUGS}`);
    expect(response.status).toBe(200);
    expect(tickers(response.body)).toEqual(['KXELECX', 'KXBTCX', 'KXFEDX']);
    expect(response.body[0]).toEqual({
      id: ids.series.elec,
      ticker: 'KXELECX',
      slug: 'kxelecx',
      title: 'Approval rating',
      seriesType: 'single',
      recurrence: 'weekly',
      description: 'Approval rating.',
      active: true,
      closed: false,
      createdAt: '2026-01-03T00:00:00.000+00:00',
      updatedAt: '2026-02-01T00:00:00.000+00:00',
      tags: [
        { id: ids.tags.elections, slug: 'elections', label: 'Elections' },
        { id: ids.tags.fed, slug: 'fed', label: 'Fed' },
      ],
    });
    expect(response.body[1].tags).toEqual([]);
    const alias = await get(`/api/compat/series?${FIXTURE_SLUGS}`);
    expect(alias.status).toBe(200);
    expect(alias.body).toEqual(response.body);
  });

  it('pages with limit 20 by default, clamps limit at 100 and offsets', async () => {
    const first = await get('/series?recurrence=scan');
    expect(first.body).toHaveLength(20);
    expect(first.body[0].ticker).toBe('SCAN10050');
    const clamped = await get('/series?recurrence=scan&limit=1000');
    expect(clamped.status).toBe(200);
    expect(clamped.body).toHaveLength(100);
    const exact = await get('/series?recurrence=scan&limit=100');
    expect(exact.body).toEqual(clamped.body);
    const next = await get('/series?recurrence=scan&limit=5&offset=20');
    expect(tickers(next.body)).toEqual(['SCAN10030', 'SCAN10029', 'SCAN10028', 'SCAN10027', 'SCAN10026']);
    expect((await get('/series?recurrence=scan&offset=0&limit=1')).body[0].ticker).toBe('SCAN10050');
  });

  it('never reads past the 10,000-row scan window', async () => {
    const edge = await get('/series?recurrence=scan&offset=9990&limit=20');
    expect(edge.status).toBe(200);
    expect(tickers(edge.body)).toEqual(Array.from({ length: 10 }, (_, i) => `SCAN${60 - i}`));
    for (const offset of ['10000', '10001', String(2 ** 40), '100000000000000000000']) {
      const beyond = await get(`/series?recurrence=scan&offset=${offset}`);
      expect(beyond.status).toBe(200);
      expect(beyond.body).toEqual([]);
    }
  });

  it('filters by recurrence, case-insensitively', async () => {
    expect(tickers((await get('/series?recurrence=WEEKLY')).body)).toEqual(['KXELECX']);
    expect(tickers((await get('/series?recurrence=MONTHLY')).body)).toEqual(['KXFEDX']);
    expect((await get('/series?recurrence=hourly')).body).toEqual([]);
    expect(tickers((await get(`/series?recurrence=&${FIXTURE_SLUGS}`)).body)).toEqual(['KXELECX', 'KXBTCX', 'KXFEDX']);
  });

  it('filters by slug: repeated or comma-separated tickers or ids (slugs also match)', async () => {
    expect(tickers((await get('/series?slug=KXFEDX')).body)).toEqual(['KXFEDX']);
    expect(tickers((await get(`/series?slug=${ids.series.btc}`)).body)).toEqual(['KXBTCX']);
    expect(tickers((await get(`/series?slug=KXFEDX,${ids.series.btc}`)).body)).toEqual(['KXBTCX', 'KXFEDX']);
    expect(tickers((await get(`/series?slug=KXFEDX&slug=${ids.series.elec}`)).body)).toEqual(['KXELECX', 'KXFEDX']);
    expect(tickers((await get('/series?slug=kxbtcx')).body)).toEqual(['KXBTCX']);
    expect((await get('/series?slug=NOPE,999999999')).body).toEqual([]);
  });

  it('filters by categories_ids / categoriesIds (ids or slugs) and categories_labels / categoriesLabels (labels or slugs)', async () => {
    const onlyFixture = (path: string) => get(`${path}&${FIXTURE_SLUGS}`).then((r) => tickers(r.body));
    expect(await onlyFixture(`/series?categories_ids=${ids.categories.politics}`)).toEqual(['KXELECX']);
    expect(await onlyFixture('/series?categories_ids=economics')).toEqual(['KXBTCX', 'KXFEDX']);
    expect(await onlyFixture(`/series?categoriesIds=${ids.categories.politics}`)).toEqual(['KXELECX']);
    expect(await onlyFixture(`/series?categories_ids=politics&categoriesIds=${ids.categories.economics}`)).toEqual(['KXELECX', 'KXBTCX', 'KXFEDX']);
    expect(await onlyFixture('/series?categories_ids=nothing')).toEqual([]);
    expect(await onlyFixture('/series?categories_labels=Politics')).toEqual(['KXELECX']);
    expect(await onlyFixture('/series?categories_labels=ECONOMICS')).toEqual(['KXBTCX', 'KXFEDX']);
    expect(await onlyFixture('/series?categoriesLabels=politics')).toEqual(['KXELECX']);
    expect(await onlyFixture('/series?categories_labels=Politics&categoriesLabels=economics')).toEqual(['KXELECX', 'KXBTCX', 'KXFEDX']);
    expect(await onlyFixture(`/series?categories_labels=${ids.categories.politics}`)).toEqual([]);
    expect(await onlyFixture('/series?categories_ids=economics&categories_labels=Politics')).toEqual([]);
  });

  it('returns no rows for closed=true and accepts include_chat and exclude_events', async () => {
    expect((await get('/series?closed=true')).body).toEqual([]);
    expect(tickers((await get(`/series?closed=false&${FIXTURE_SLUGS}`)).body)).toEqual(['KXELECX', 'KXBTCX', 'KXFEDX']);
    const accepted = await get(`/series?include_chat=true&exclude_events=true&${FIXTURE_SLUGS}`);
    expect(tickers(accepted.body)).toEqual(['KXELECX', 'KXBTCX', 'KXFEDX']);
  });

  const ORDERS: Array<[string, string[]]> = [
    ['id', ['KXFEDX', 'KXELECX', 'KXBTCX']],
    ['ticker', ['KXBTCX', 'KXELECX', 'KXFEDX']],
    ['slug', ['KXBTCX', 'KXELECX', 'KXFEDX']],
    ['title', ['KXELECX', 'KXBTCX', 'KXFEDX']],
    ['recurrence', ['KXBTCX', 'KXFEDX', 'KXELECX']],
    ['seriesType', ['KXFEDX', 'KXBTCX', 'KXELECX']],
    ['updatedAt', ['KXELECX', 'KXBTCX', 'KXFEDX']],
    ['event_count', ['KXELECX', 'KXBTCX', 'KXFEDX']],
    ['createdAt', ['KXFEDX', 'KXBTCX', 'KXELECX']],
  ];
  it.each(ORDERS)('orders by %s both ways (ties by id)', async (order, ascending) => {
    const up = await get(`/series?order=${order}&ascending=true&${FIXTURE_SLUGS}`);
    expect(up.status).toBe(200);
    expect(tickers(up.body)).toEqual(ascending);
    const down = await get(`/series?order=${order}&ascending=false&${FIXTURE_SLUGS}`);
    expect(tickers(down.body)).toEqual([...ascending].reverse());
  });

  it('orders by createdAt, descending, by default', async () => {
    expect(tickers((await get(`/series?${FIXTURE_SLUGS}`)).body)).toEqual(['KXELECX', 'KXBTCX', 'KXFEDX']);
    expect(tickers((await get(`/series?ascending=true&${FIXTURE_SLUGS}`)).body)).toEqual(['KXFEDX', 'KXBTCX', 'KXELECX']);
  });

  it.each([
    'order=volume',
    'order=createdAt,id',
    'ascending=maybe',
    'limit=abc',
    'limit=0',
    'limit=-5',
    'offset=-1',
    'offset=1.5',
    'closed=yes',
    'include_chat=2',
    'slug=<10,000 characters>',
  ])('answers 400 to %s', async (query) => {
    const response = await get(`/series?${query.replace('<10,000 characters>', 'x'.repeat(10_000))}`);
    expect(response.status).toBe(400);
    expect(response.body.error.code).toBe('invalid_request');
  });

  it.each(['recurrence', 'slug', 'categories_ids', 'categoriesIds', 'categories_labels', 'categoriesLabels', 'order'])(
    'treats SQL metacharacters in %s as plain text',
    async (name) => {
      for (const value of [...["' or 1=1 --", "x'); drop table series; --", '%', '_', '\\'].map(encodeURIComponent), '%00', 'a%00b']) {
        const response = await get(`/series?${name}=${value}`);
        expect([200, 400]).toContain(response.status);
        if (response.status === 200) expect(response.body).toEqual([]);
      }
    },
  );

  it('keeps answering after hostile input', async () => {
    expect((await api.db('series').count<{ count: string }[]>('* as count'))[0]!.count).toBe('10053');
  });
});

describe('GET /series/{id}', () => {
  it('reads one series by id or ticker with archived, commentsEnabled, volume and liquidity', async () => {
    const byTicker = await get('/series/KXFEDX');
    expect(byTicker.status).toBe(200);
    expect(byTicker.body).toEqual({
      id: ids.series.fed,
      ticker: 'KXFEDX',
      slug: 'kxfedx',
      title: 'Fed decisions',
      seriesType: 'recurring',
      recurrence: 'monthly',
      description: 'Fed decisions.',
      active: true,
      closed: false,
      createdAt: '2026-01-01T00:00:00.000+00:00',
      updatedAt: '2026-04-01T00:00:00.000+00:00',
      tags: [{ id: ids.tags.fed, slug: 'fed', label: 'Fed' }],
      archived: false,
      commentsEnabled: true,
      volume: '301',
      liquidity: '60.5',
    });
    expect((await get(`/series/${ids.series.fed}`)).body).toEqual(byTicker.body);
    const alias = await get(`/api/compat/series/${ids.series.fed}`);
    expect(alias.status).toBe(200);
    expect(alias.body).toEqual(byTicker.body);
    const empty = await get('/series/SCAN1');
    expect(empty.body).toMatchObject({ ticker: 'SCAN1', volume: '0', liquidity: '0', tags: [] });
  });

  it.each(['NOPE', '999999999', '99999999999999999999', "' or 1=1 --", 'kxfedx', '%E2%82%AC'])('answers 404 to %s', async (id) => {
    for (const prefix of ['/series/', '/api/compat/series/']) {
      const response = await get(`${prefix}${id}`);
      expect(response.status).toBe(404);
      expect(response.body.error.code).toBe('not_found');
    }
  });

  it('answers 400 to %00, naming the parameter (NUL cannot be stored or compared as text)', async () => {
    for (const prefix of ['/series/', '/api/compat/series/']) {
      const response = await get(`${prefix}%00`);
      expect(response.status).toBe(400);
      expect(response.body.error.message).toBe("path parameter 'id' contains a NUL character");
    }
  });

  it('answers 400 to a 10,000-character id', async () => {
    expect((await get(`/series/${'9'.repeat(10_000)}`)).status).toBe(400);
  });
});

describe('GET /series/{id}/comments/count', () => {
  it("counts the visible comments across the series' events", async () => {
    for (const path of ['/series/KXFEDX/comments/count', `/series/${ids.series.fed}/comments/count`, '/api/compat/series/KXFEDX/comments/count']) {
      const response = await get(path);
      expect(response.status).toBe(200);
      expect(response.body).toEqual({ count: 3 });
    }
    expect((await get('/series/KXBTCX/comments/count')).body).toEqual({ count: 0 });
  });

  it('answers 404 to an unknown series', async () => {
    expect((await get('/series/NOPE/comments/count')).status).toBe(404);
    expect((await get('/api/compat/series/123456789/comments/count')).status).toBe(404);
    expect((await get(`/series/${encodeURIComponent("' or 1=1 --")}/comments/count`)).status).toBe(404);
  });
});

describe('series summaries', () => {
  const FED_SUMMARY = () => ({
    id: ids.series.fed,
    title: 'Fed decisions',
    slug: 'kxfedx',
    eventDates: ['2026-01-05', '2026-02-10', '2026-03-02'],
    eventWeeks: [2, 7, 10],
    earliest_open_week: 7,
    earliest_open_date: '2026-02-10',
  });

  it('summarises event days, ISO weeks and the earliest ACTIVE event, by id, ticker or slug', async () => {
    for (const path of [
      `/series-summary/${ids.series.fed}`,
      '/series-summary/KXFEDX',
      '/series-summary/slug/kxfedx',
      '/series-summary/slug/KXFEDX',
      `/api/compat/series-summary/${ids.series.fed}`,
      '/api/compat/series-summary/slug/kxfedx',
    ]) {
      const response = await get(path);
      expect(response.status, path).toBe(200);
      expect(response.body).toEqual(FED_SUMMARY());
    }
  });

  it('keeps weeks in order of first occurrence across a year end, and nulls when no event is ACTIVE', async () => {
    const response = await get('/series-summary/KXELECX');
    expect(response.body).toEqual({
      id: ids.series.elec,
      title: 'Approval rating',
      slug: 'kxelecx',
      eventDates: ['2025-12-22', '2026-01-06'],
      eventWeeks: [52, 2],
      earliest_open_week: null,
      earliest_open_date: null,
    });
    const bare = await get('/series-summary/slug/scan-1');
    expect(bare.body).toMatchObject({ eventDates: [], eventWeeks: [], earliest_open_week: null, earliest_open_date: null });
  });

  it('answers 404 to unknown series', async () => {
    for (const path of ['/series-summary/NOPE', '/series-summary/slug/nope', '/api/compat/series-summary/424242', '/api/compat/series-summary/slug/nope', `/series-summary/slug/${ids.series.fed}`, "/series-summary/'%20or%201=1%20--"]) {
      const response = await get(path);
      expect(response.status, path).toBe(404);
    }
  });
});

describe('GET /tags/{id} and /tags/slug/{slug}', () => {
  it('reads a compatibility tag by id or slug', async () => {
    const bySlug = await get('/tags/fed');
    expect(bySlug.status).toBe(200);
    expect(bySlug.body).toEqual({
      id: ids.tags.fed,
      slug: 'fed',
      label: 'Fed',
      forceShow: false,
      forceHide: false,
      isCarousel: false,
      publishedAt: '2026-01-01T12:00:00.000+00:00',
      createdAt: '2026-01-01T12:00:00.000+00:00',
      updatedAt: '2026-01-02T12:00:00.000+00:00',
      createdBy: 7,
      updatedBy: 9,
      activeEventsCount: 2,
    });
    expect((await get(`/tags/${ids.tags.fed}`)).body).toEqual(bySlug.body);
    expect((await get('/tags/slug/fed')).body).toEqual(bySlug.body);
  });

  it('shows 0 for an unrecorded creator and counts only ACTIVE events', async () => {
    const bitcoin = await get('/tags/slug/bitcoin');
    expect(bitcoin.body).toMatchObject({ slug: 'bitcoin', isCarousel: true, createdBy: 0, updatedBy: 0, activeEventsCount: 2 });
    expect(bitcoin.body.updatedAt).toMatch(OFFSET_TS);
    expect((await get('/tags/elections')).body.activeEventsCount).toBe(1);
    expect((await get('/tags/unused')).body.activeEventsCount).toBe(0);
  });

  it('keeps activeEventsCount exact as events are tagged, change status and are deleted', async () => {
    const count = async () => (await get('/tags/slug/unused')).body.activeEventsCount as number;
    const direct = async () =>
      Number((await api.db('event_tags as et').join('events as e', 'e.id', 'et.event_id').where({ 'et.tag_id': ids.tags.unused, 'e.status': 'ACTIVE' }).count<{ count: string }[]>('* as count'))[0]!.count);
    const event = (ticker: string, status: string) => ({
      ticker, slug: ticker.toLowerCase(), series_id: ids.series.btc, title: ticker, status,
      start_date: at('2026-02-01T00:00:00Z'), strike_date: at('2026-12-31T00:00:00Z'),
    });
    const created = await api.db('events').insert([event('TAGC-1', 'ACTIVE'), event('TAGC-2', 'ACTIVE'), event('TAGC-3', 'CLOSED')]).returning('id');
    const [a, b, c] = created.map((r: { id: string }) => String(r.id));
    try {
      expect(await count()).toBe(0);
      await api.db('event_tags').insert([a, b, c].map((event_id) => ({ event_id, tag_id: ids.tags.unused })));
      expect(await count()).toBe(2);
      await api.db('events').where({ id: a }).update({ status: 'CLOSED' });
      expect(await count()).toBe(1);
      await api.db('events').where({ id: a }).update({ title: 'renamed' });
      expect(await count()).toBe(1);
      await api.db('events').where({ id: c }).update({ status: 'ACTIVE' });
      expect(await count()).toBe(2);
      await api.db('event_tags').where({ event_id: c }).delete();
      expect(await count()).toBe(1);
      await api.db('events').where({ id: b }).delete();
      expect(await count()).toBe(0);
      await api.db('event_tags').insert({ event_id: c, tag_id: ids.tags.unused });
      await api.db('event_tags').where({ event_id: c }).update({ tag_id: ids.tags.elections });
      expect(await count()).toBe(0);
      expect((await get('/tags/elections')).body.activeEventsCount).toBe(2);
      expect(await count()).toBe(await direct());
    } finally {
      await api.db('events').whereIn('ticker', ['TAGC-1', 'TAGC-2', 'TAGC-3']).delete();
    }
    expect((await get('/tags/elections')).body.activeEventsCount).toBe(1);
  });

  it('answers 404 to unknown tags', async () => {
    for (const path of ['/tags/nope', '/tags/999999', '/tags/99999999999999999999', '/tags/slug/nope', `/tags/slug/${ids.tags.fed}`, '/tags/%27%20or%201=1%20--']) {
      const response = await get(path);
      expect(response.status, path).toBe(404);
    }
    expect((await get('/tags/slug/%00')).status).toBe(400);
    expect((await get(`/tags/${'a'.repeat(10_000)}`)).status).toBe(400);
  });
});

describe('GET /events/pagination totals', () => {
  it('count the events a status filter keeps exactly, as events come, change status and go', async () => {
    const total = async (query: string) => (await get(`/events/pagination?limit=1${query}`)).body.pagination.totalResults as number;
    const direct = async (active: boolean) =>
      Number((await api.db('events').where('status', active ? '=' : '<>', 'ACTIVE').count<{ count: string }[]>('* as count'))[0]!.count);
    const expectTotals = async (what: string) => {
      const [active, inactive] = [await direct(true), await direct(false)];
      expect(await total(''), `${what}: default (ACTIVE)`).toBe(active);
      expect(await total('&closed=false'), `${what}: closed=false`).toBe(active);
      expect(await total('&active=false&closed=true'), `${what}: closed`).toBe(inactive);
      expect(await total('&active=true&closed=true'), `${what}: contradictory`).toBe(0);
    };
    const event = (ticker: string, status: string) => ({
      ticker, slug: ticker.toLowerCase(), series_id: ids.series.btc, title: ticker, status,
      start_date: at('2026-02-01T00:00:00Z'), strike_date: at('2026-12-31T00:00:00Z'),
    });
    await expectTotals('fixture');
    try {
      await api.db('events').insert([event('PGT-1', 'ACTIVE'), event('PGT-2', 'ACTIVE'), event('PGT-3', 'CLOSED')]);
      await expectTotals('after inserts');
      await api.db('events').where({ ticker: 'PGT-1' }).update({ status: 'CLOSED' });
      await api.db('events').where({ ticker: 'PGT-3' }).update({ status: 'RESOLVED' });
      await expectTotals('after status changes');
      await api.db('events').where({ ticker: 'PGT-2' }).delete();
      await expectTotals('after a delete');
    } finally {
      await api.db('events').where('ticker', 'like', 'PGT-%').delete();
    }
    await expectTotals('after cleaning up');
  });
});

describe('GET /public-search', () => {
  const search = (query: string, path = '/public-search') => get(`${path}?${query}`);
  const eventTickers = (body: { events: Array<{ ticker: string }> }) => body.events.map((e) => e.ticker);

  it('returns events, tags and profiles in the PublicSearchResult shape, on every alias', async () => {
    const response = await search('q=fed');
    expect(response.status).toBe(200);
    expect(response.body.events[0]).toEqual({
      id: expect.any(String),
      ticker: expect.stringMatching(/^KXFEDX-/),
      slug: expect.stringMatching(/^kxfedx-/),
      title: expect.stringMatching(/^Fed /),
      subtitle: 'Fed decisions',
      active: expect.any(Boolean),
      commentsEnabled: true,
    });
    expect(response.body.tags).toEqual([{ id: ids.tags.fed, slug: 'fed', label: 'Fed' }]);
    // Both start with "fed" (one by username, one by name): ties by username.
    expect(response.body.profiles.map((p: { pseudonym: string }) => p.pseudonym)).toEqual(['chartist', 'fed_watcher']);
    expect(response.body.profiles[1]).toEqual({ id: expect.any(String), name: 'Jerome Follower', pseudonym: 'fed_watcher', displayUsernamePublic: true });
    expect((await search('q=jerome')).body.profiles.map((p: { pseudonym: string }) => p.pseudonym)).toEqual(['fed_watcher']);
    expect(response.body.pagination).toEqual({ hasMore: false, totalResults: 4 });
    for (const path of ['/api/public-search', '/api/compat/public-search']) {
      const alias = await search('q=fed', path);
      expect(alias.status).toBe(200);
      expect(alias.body).toEqual(response.body);
    }
  });

  it('ranks exact matches, then whole words, then prefixes, then typos', async () => {
    const response = await search('q=bitcoin');
    // BITCOIN: exact ticker; then the events of the series "Bitcoin price", the whole word in their text
    // (KXBTCX-1 "Bitcoin above 100k" is ACTIVE, KXBTCX-3 "Who holds bitcoin" RESOLVED: active first).
    expect(eventTickers(response.body)).toEqual(['BITCOIN', 'KXBTCX-1', 'KXBTCX-3']);
    expect(response.body.tags.map((t: { slug: string }) => t.slug)).toEqual(['bitcoin']);
    // A typo still matches; neither event is active: higher volume first (7, then 5).
    expect(eventTickers((await search('q=aproval')).body)).toEqual(['KXELECX-2', 'KXELECX-1']);
    expect(eventTickers((await search('q=FED%20MARCH')).body)).toEqual(['KXFEDX-MAR']);
    expect(eventTickers((await search('q=march%20fed')).body)).toEqual(['KXFEDX-MAR']);
    // "electionz" finds the tag "elections", no event.
    const typo = await search('q=electionz');
    expect(typo.body.tags.map((t: { slug: string }) => t.slug)).toEqual(['elections']);
    expect(typo.body.pagination.totalResults).toBe(0);
    // "decision" is a whole word of three titles (active first, then by volume); "Fed February minutes"
    // matches it only as a prefix of its series' "decisions": after them.
    const decision = await search('q=decision&limit_per_type=50');
    expect(eventTickers(decision.body)).toEqual(['KXFEDX-MAR', 'KXFEDX-FEB', 'KXFEDX-JAN', 'KXFEDX-FEB2']);
    expect(decision.body.pagination).toEqual({ hasMore: false, totalResults: 4 });
  });

  it('matches words shorter than 4 characters as prefixes, never as typos', async () => {
    const fe = await search('q=fe');
    // Every "Fed" event, by prefix: active first, then by volume.
    expect(eventTickers(fe.body)).toEqual(['KXFEDX-MAR', 'KXFEDX-FEB', 'KXFEDX-JAN', 'KXFEDX-FEB2']);
    expect(fe.body.tags.map((t: { slug: string }) => t.slug)).toEqual(['fed']);
    expect(fe.body.profiles.map((p: { pseudonym: string }) => p.pseudonym)).toEqual(['chartist', 'fed_watcher']);
    // "arc" is inside "March" but starts no word.
    const arc = await search('q=arc');
    expect(arc.body).toEqual({ events: [], tags: [], profiles: [], pagination: { hasMore: false, totalResults: 0 } });
    // Ticker prefixes match too: every event's series ticker starts with KX.
    expect(eventTickers((await search('q=KX&limit_per_type=50')).body)).toHaveLength(9);
  });

  it('matches words of any script by prefix, code point by code point', async () => {
    // Each title is found by the prefix of its first word alone.
    const titles = { surrogateEdge: 'Z\u{D7FF} edge', pastSurrogates: 'Z\u{E000} past', highest: 'Y\u{10FFFF}\u{10FFFF} top', next: 'Yz next', onlyHighest: '\u{10FFFF} alone' };
    await api.db('events').insert(Object.entries(titles).map(([key, title]) => ({
      ticker: `EDGE-${key.toUpperCase()}`, slug: `edge-${key.toLowerCase()}`, series_id: ids.series.btc, title, status: 'ACTIVE',
      start_date: at('2026-02-01T00:00:00Z'), strike_date: at('2026-12-31T00:00:00Z'),
    })));
    try {
      const titlesOf = async (q: string) => (await search(`q=${encodeURIComponent(q)}`)).body.events.map((e: { title: string }) => e.title);
      expect(await titlesOf('z\u{D7FF}')).toEqual([titles.surrogateEdge]);
      expect(await titlesOf('z\u{E000}')).toEqual([titles.pastSurrogates]);
      expect(await titlesOf('y\u{10FFFF}')).toEqual([titles.highest]);
      expect(await titlesOf('yz\u{10FFFF}')).toEqual([]);
      // Text without any letter or digit finds nothing.
      expect(await titlesOf('\u{10FFFF}')).toEqual([]);
    } finally {
      await api.db('events').where('ticker', 'like', 'EDGE-%').delete();
    }
  });

  it('runs on connections of its own, planned without values; the rest of the service plans for its values', async () => {
    const mode = async (db: typeof api.db) => (await db.raw('show plan_cache_mode')).rows[0].plan_cache_mode;
    expect(await mode(api.service.pools.publicSearchDb)).toBe('force_generic_plan');
    expect(await mode(api.db)).toBe('auto');
  });

  it('counts matching events up to 1,000', async () => {
    await api.db.raw(
      `insert into events (ticker, slug, series_id, title, status, start_date, strike_date)
       select 'CAP-' || g, 'cap-' || g, ?, 'Capcount ' || g, 'ACTIVE', now(), now() + interval '1 day' from generate_series(1, 1005) g`,
      [ids.series.btc!],
    );
    try {
      const response = await search('q=capcount');
      expect(response.body.events).toHaveLength(10);
      expect(response.body.pagination).toEqual({ hasMore: true, totalResults: 1000 });
      expect((await search('q=capcount+1000')).body.events[0].ticker).toBe('CAP-1000');
    } finally {
      await api.db('events').where('ticker', 'like', 'CAP-%').delete();
    }
  });

  it('limits each bucket with limit_per_type / limitPerType (default 10, clamped at 50) and reports hasMore', async () => {
    const one = await search('q=fed&limit_per_type=1');
    expect(one.body.events).toHaveLength(1);
    expect(one.body.profiles).toHaveLength(1);
    expect(one.body.pagination).toEqual({ hasMore: true, totalResults: 4 });
    expect((await search('q=fed&limitPerType=2')).body.events).toHaveLength(2);
    expect((await search('q=fed&limit_per_type=3&limitPerType=1')).body.events).toHaveLength(3);
    const scan = await search('q=scan&limit_per_type=1000');
    expect(scan.status).toBe(200);
    const defaults = await search('q=decision');
    expect(defaults.body.events).toHaveLength(4);
    // 60 events named "Clamp": default 10, clamped at 50.
    const seriesId = ids.series.btc;
    await api.db('events').insert(Array.from({ length: 60 }, (_, i) => ({
      ticker: `CLAMP-${i}`, slug: `clamp-${i}`, series_id: seriesId, title: `Clamp ${i}`, status: 'ACTIVE',
      start_date: at('2026-02-01T00:00:00Z'), strike_date: at('2026-12-31T00:00:00Z'),
    })));
    try {
      expect((await search('q=clamp')).body.events).toHaveLength(10);
      const clamped = await search('q=clamp&limit_per_type=1000');
      expect(clamped.body.events).toHaveLength(50);
      expect(clamped.body.pagination).toEqual({ hasMore: true, totalResults: 60 });
      expect((await search('q=clamp&limitPerType=51')).body.events).toHaveLength(50);
    } finally {
      await api.db('events').where('ticker', 'like', 'CLAMP-%').delete();
    }
  });

  it('returns empty buckets with hasMore false after page 1', async () => {
    const response = await search('q=fed&page=2&limit_per_type=1');
    expect(response.status).toBe(200);
    expect(response.body).toEqual({ events: [], tags: [], profiles: [], pagination: { hasMore: false, totalResults: 4 } });
    expect((await search('q=fed&page=1')).body.events).toHaveLength(4);
    expect((await search('q=fed&page=0')).status).toBe(400);
  });

  it.each([
    ['active', ['KXFEDX-FEB', 'KXFEDX-MAR']],
    ['open', ['KXFEDX-FEB', 'KXFEDX-MAR']],
    ['live', ['KXFEDX-FEB', 'KXFEDX-MAR']],
    ['closed', ['KXFEDX-FEB2', 'KXFEDX-JAN']],
    ['ended', ['KXFEDX-FEB2', 'KXFEDX-JAN']],
    ['resolved', ['KXFEDX-JAN']],
  ])('filters events by events_status=%s and its alias eventsStatus', async (status, expected) => {
    const sorted = (body: { events: Array<{ ticker: string }> }) => eventTickers(body).sort();
    expect(sorted((await search(`q=fed&events_status=${status}`)).body)).toEqual(expected);
    expect(sorted((await search(`q=fed&eventsStatus=${status}`)).body)).toEqual(expected);
  });

  it('refuses an unknown events_status with a 400', async () => {
    expect((await search('q=fed&events_status=pending')).status).toBe(400);
    expect((await search('q=fed&eventsStatus=ACTIVE%27--')).status).toBe(400);
  });

  it('keeps events carrying every events_tag / eventsTag (ids, slugs or labels)', async () => {
    const sorted = (query: string) => search(query).then((r) => eventTickers(r.body).sort());
    expect(await sorted('q=fed&events_tag=elections')).toEqual(['KXFEDX-MAR']);
    expect(await sorted(`q=fed&eventsTag=${ids.tags.elections}`)).toEqual(['KXFEDX-MAR']);
    expect(await sorted('q=fed&events_tag=Fed')).toEqual(['KXFEDX-FEB', 'KXFEDX-JAN', 'KXFEDX-MAR']);
    expect(await sorted('q=fed&events_tag=fed,elections')).toEqual(['KXFEDX-MAR']);
    expect(await sorted('q=fed&events_tag=fed&eventsTag=ELECTIONS')).toEqual(['KXFEDX-MAR']);
    expect(await sorted('q=fed&events_tag=nope')).toEqual([]);
    expect((await search('q=fed&events_tag=nope')).body.pagination).toEqual({ hasMore: false, totalResults: 0 });
  });

  it('drops non-ACTIVE events when keep_closed_markets / keepClosedMarkets is exactly 0', async () => {
    const sorted = (query: string) => search(query).then((r) => eventTickers(r.body).sort());
    expect(await sorted('q=fed&keep_closed_markets=0')).toEqual(['KXFEDX-FEB', 'KXFEDX-MAR']);
    expect(await sorted('q=fed&keepClosedMarkets=0')).toEqual(['KXFEDX-FEB', 'KXFEDX-MAR']);
    expect(await sorted('q=fed&keep_closed_markets=1')).toHaveLength(4);
    expect(await sorted('q=fed&keep_closed_markets=0&events_status=resolved')).toEqual([]);
    expect((await search('q=fed&keep_closed_markets=zero')).status).toBe(400);
  });

  it('leaves out the tag and profile buckets on search_tags / search_profiles false (and their aliases)', async () => {
    const noTags = await search('q=fed&search_tags=false');
    expect(noTags.body.tags).toEqual([]);
    expect(noTags.body.profiles).toHaveLength(2);
    expect((await search('q=fed&searchTags=false')).body.tags).toEqual([]);
    expect((await search('q=fed&search_tags=true')).body.tags).toHaveLength(1);
    const noProfiles = await search('q=fed&search_profiles=false');
    expect(noProfiles.body.profiles).toEqual([]);
    expect(noProfiles.body.tags).toHaveLength(1);
    expect((await search('q=fed&searchProfiles=false')).body.profiles).toEqual([]);
    expect((await search('q=fed&search_profiles=nope')).status).toBe(400);
  });

  it('filters events by the recurrence of their series', async () => {
    expect(eventTickers((await search('q=approval&recurrence=weekly')).body).sort()).toEqual(['KXELECX-1', 'KXELECX-2']);
    expect(eventTickers((await search('q=approval&recurrence=daily')).body)).toEqual([]);
    expect(eventTickers((await search('q=approval&recurrence=')).body)).toHaveLength(2);
  });

  it('excludes events and tags named by exclude_tag_id / excludeTagId (ids, slugs or labels)', async () => {
    const bitcoin = await search('q=bitcoin&exclude_tag_id=fed');
    expect(eventTickers(bitcoin.body)).toEqual(['BITCOIN', 'KXBTCX-1']);
    expect(bitcoin.body.tags).toHaveLength(1);
    const noBitcoinTag = await search(`q=bitcoin&excludeTagId=${ids.tags.bitcoin}`);
    expect(eventTickers(noBitcoinTag.body)).toEqual([]);
    expect(noBitcoinTag.body.tags).toEqual([]);
    expect(eventTickers((await search('q=fed&exclude_tag_id=Elections&excludeTagId=nope')).body).sort()).toEqual(['KXFEDX-FEB', 'KXFEDX-FEB2', 'KXFEDX-JAN']);
  });

  it('accepts cache, optimized, sort and ascending without changing the ranking', async () => {
    const plain = await search('q=bitcoin');
    const hinted = await search('q=bitcoin&cache=false&optimized=true&sort=volume&ascending=true');
    expect(hinted.status).toBe(200);
    expect(hinted.body).toEqual(plain.body);
  });

  it('requires q, and finds nothing for blank text', async () => {
    expect((await get('/public-search')).status).toBe(400);
    const blank = await search('q=%20%20');
    expect(blank.status).toBe(200);
    expect(blank.body).toEqual({ events: [], tags: [], profiles: [], pagination: { hasMore: false, totalResults: 0 } });
  });

  it('searches the first 100 characters of a 10,000-character q, quickly', async () => {
    const started = Date.now();
    const long = await search(`q=${'fed+'.repeat(2_500)}`);
    expect(long.status).toBe(200);
    expect(Date.now() - started).toBeLessThan(2_000);
    // Text past the first 100 characters is not searched.
    const late = await search(`q=${'x'.repeat(100)}bitcoin`);
    expect(late.status).toBe(200);
    expect(late.body.events).toEqual([]);
    const early = await search(`q=bitcoin${'+'.repeat(9_993)}`);
    expect(eventTickers(early.body)).toEqual(['BITCOIN', 'KXBTCX-1', 'KXBTCX-3']);
    const cut = await search(`q=${'b'.repeat(10_000)}`);
    expect(cut.status).toBe(200);
    expect(cut.body.events).toEqual([]);
  });

  it('treats LIKE and SQL metacharacters in q as plain text', async () => {
    for (const q of ["' or 1=1 --", '%', '_', '%%%', '\\', "fed'; drop table events; --", '%00']) {
      const response = await search(`q=${encodeURIComponent(q)}`);
      expect(response.status, q).toBe(200);
      expect(response.body.events, q).toEqual([]);
      expect(response.body.tags, q).toEqual([]);
    }
    // a real NUL cannot be stored or compared as text: refused, naming the parameter
    const nul = await search('q=%00fed');
    expect(nul.status).toBe(400);
    expect(nul.body.error.message).toBe("query parameter 'q' contains a NUL character");
  });

  it.each(['events_tag', 'eventsTag', 'exclude_tag_id', 'excludeTagId', 'recurrence', 'sort'])(
    'treats SQL metacharacters in %s as plain text',
    async (name) => {
      for (const value of ["' or 1=1 --", '%', '%00', 'x'.repeat(150)]) {
        const response = await search(`q=fed&${name}=${encodeURIComponent(value)}`);
        expect(response.status).toBe(200);
      }
    },
  );

  it('refuses malformed numbers and booleans with a 400', async () => {
    for (const query of ['q=fed&limit_per_type=abc', 'q=fed&limit_per_type=0', 'q=fed&limitPerType=-1', 'q=fed&page=x', 'q=fed&cache=perhaps', 'q=fed&optimized=2', 'q=fed&ascending=up']) {
      expect((await search(query)).status, query).toBe(400);
    }
  });
});

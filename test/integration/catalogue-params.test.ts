import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { catalogueOperations, pathsOf, type CatalogueOperation } from '../support/catalogue.js';
import { TestService } from '../support/service.js';

/**
 * The catalogue's parameters, table by table: every alias path answers as its canonical path; every shared
 * filter spelling on every event list that takes it; every order key both ways where the other files do
 * not already walk them; the default and the clamped page size of every list (read from the document);
 * the 10,000-row scan window of every offset list; and the parameters documented to return no rows
 * or have no effect, on every path.
 *
 * Data: fixtures PX1..PX5 (series PXS1 weekly / PXS2 px-daily, tags pt-*) whose every value is known, and
 * bulk rows past the scan window: 10,050 ACTIVE and 10,050 ended events, 10,050 event creators, 10,050
 * series, 150 markets.
 */

let api: TestService;
const fx: Record<string, string> = {};
const tag: Record<string, string> = {};
const seriesIds: Record<string, string> = {};
let creatorId = '';

const BULK = 10_050;

beforeAll(async () => {
  api = await TestService.start();
  const db = api.db;
  const [category] = await db('categories').insert({ slug: 'params-cat', name: 'Params' }).returning('id');
  for (const slug of ['pt-a', 'pt-b', 'pt-c', 'pt-rel']) tag[slug] = String((await db('tags').insert({ slug, label: slug.toUpperCase() }).returning('id'))[0].id);
  for (const [ticker, frequency] of [['PXS1', 'weekly'], ['PXS2', 'px-daily']]) {
    seriesIds[ticker!] = String((await db('series').insert({ ticker, slug: ticker!.toLowerCase(), title: `Params ${ticker}`, category_id: category.id, frequency, created_at: '2018-01-01T00:00:00Z' }).returning('id'))[0].id);
  }
  const [creator] = await db('users').insert({ email: 'pcreator@example.com', username: 'pcreator', name: 'P Creator', password_hash: 'x' }).returning('id');
  creatorId = String(creator.id);
  const events = [
    ['PX1', 'PXS1', 'ACTIVE', '2020-06-01T00:00:00Z', '2099-01-01T00:00:00Z', null, '100.5', '50.25', ['pt-a']],
    ['PX2', 'PXS1', 'ACTIVE', '2098-01-01T12:00:00Z', '2098-06-01T00:00:00Z', null, '200', '0', ['pt-b']],
    ['PX3', 'PXS2', 'ACTIVE', '2021-03-01T10:00:00Z', '2021-03-02T00:00:00Z', null, '0.00000001', '999999.99999999', ['pt-a', 'pt-c']],
    ['PX4', 'PXS2', 'CLOSED', '2021-04-01T00:00:00Z', '2021-04-02T00:00:00Z', '2021-04-02T00:00:00Z', '300', '0', ['pt-a', 'pt-b']],
    ['PX5', 'PXS2', 'RESOLVED', '2021-05-01T00:00:00Z', '2021-05-02T00:00:00Z', '2021-05-03T00:00:00Z', '0', '0', ['pt-c']],
  ] as const;
  for (const [i, [ticker, series, status, start, strike, closed, volume, liquidity, tags]] of events.entries()) {
    const stamp = `2018-01-0${i + 2}T00:00:00Z`;
    const [row] = await db('events')
      .insert({ ticker, slug: ticker.toLowerCase(), series_id: seriesIds[series], title: `Params event ${ticker}`, status, start_date: start, strike_date: strike, closed_time: closed, volume, liquidity, creator_id: creatorId, created_at: stamp, updated_at: stamp })
      .returning('id');
    fx[ticker] = String(row.id);
    await db('event_tags').insert(tags.map((t) => ({ event_id: row.id, tag_id: tag[t] })));
  }
  // pt-rel shares a market with pt-a: related_tags expands pt-rel to pt-a's events
  const [market] = await db('markets').insert({ ticker: 'PX1-M', event_id: fx.PX1, title: 'Params market' }).returning('id');
  await db('market_tags').insert([{ market_id: market.id, tag_id: tag['pt-a'] }, { market_id: market.id, tag_id: tag['pt-rel'] }]);

  // Bulk rows, with ties on every sort key (creation times, titles, volumes, names) so that the id tie-break shows.
  await db.raw(`insert into series (ticker, slug, title, category_id, frequency, created_at, updated_at)
    select 'BS' || g, 'bs-' || g, 'Bulk series ' || (g % 997), ?, 'bulk', timestamptz '2022-01-01' + (g / 3) * interval '1 minute', timestamptz '2023-01-01' + (g % 101) * interval '1 hour'
      from generate_series(1, ?) g`, [category.id, BULK]);
  const [bulk] = await db('series').insert({ ticker: 'BULK', slug: 'bulk', title: 'Bulk events', category_id: category.id, frequency: 'bulk-e' }).returning('id');
  await db.raw(`insert into users (email, username, name, password_hash, created_at, updated_at)
    select 'bulk' || g || '@example.com', 'bulkuser' || g, 'Creator ' || (g % 313), 'x', timestamptz '2022-01-01' + (g % 1000) * interval '1 hour', timestamptz '2023-01-01' + (g / 4) * interval '1 minute'
      from generate_series(1, ?) g`, [BULK]);
  await db.raw(`insert into events (ticker, slug, series_id, title, status, start_date, strike_date, volume, liquidity, open_interest, created_at, updated_at)
    select 'BA-' || g, 'ba-' || g, ?, 'Bulk event ' || (g % 977), 'ACTIVE', timestamptz '2020-01-01' + g * interval '1 minute', timestamptz '2099-01-01' + (g % 500) * interval '1 day',
           (g * 37 % 1000) / 10.0, g * 13 % 500, g % 50, timestamptz '2021-01-01' + (g / 2) * interval '1 minute', timestamptz '2021-06-01' + (g % 700) * interval '1 hour'
      from generate_series(1, ?) g`, [bulk.id, BULK]);
  await db.raw(`insert into events (ticker, slug, series_id, title, status, start_date, strike_date, closed_time, volume, liquidity, open_interest, creator_id, created_at, updated_at)
    select 'BC-' || g, 'bc-' || g, ?, 'Bulk ended ' || (g % 977), case when g % 3 = 0 then 'RESOLVED' else 'CLOSED' end,
           timestamptz '2019-01-01' + g * interval '1 minute', timestamptz '2019-06-01' + (g % 900) * interval '1 hour', timestamptz '2019-07-01' + (g % 5000) * interval '1 minute',
           (g * 7 % 1000) / 4.0, 0, g % 40, u.id, timestamptz '2019-01-01' + (g / 2) * interval '1 minute', timestamptz '2019-06-01' + (g % 300) * interval '1 hour'
      from generate_series(1, ?) g join users u on u.username = 'bulkuser' || g`, [bulk.id, BULK]);
  await db.raw(`insert into markets (ticker, event_id, title, created_at)
    select e.ticker || '-M', e.id, 'Bulk market ' || e.ticker, e.created_at from events e where e.ticker like 'BA-%' order by e.id limit 150`);
  await db.raw('analyze');
}, 120_000);
afterAll(() => api?.stop());

async function get(path: string, status = 200) {
  const response = await api.get(path);
  expect(response.status, `${path}: ${JSON.stringify(response.body).slice(0, 300)}`).toBe(status);
  return response.body;
}
const ids = (items: Array<{ id: string }>) => items.map((e) => e.id);
const fxIds = (...tickers: string[]) => tickers.map((t) => fx[t]!);

async function oracle(sql: string): Promise<string[]> {
  return (await api.db.raw(sql)).rows.map((r: { id: string }) => String(r.id));
}

/** Where the rows of each list are in its body. */
function rowsOf(handler: string, body: any): any[] {
  if (handler === 'listEvents' || handler === 'listCompatEventsKeyset' || handler === 'searchPublic') return body.events;
  if (handler === 'listSeries') return body.series;
  if (handler === 'listMarkets') return body.markets;
  if (handler === 'searchCatalogue') return body.results;
  if (handler === 'listCompatEventsPaginated') return body.data;
  return body;
}

describe('alias paths answer exactly as their canonical path', () => {
  /** A query (and path parameters) per implementation that exercises filters, order and paging. */
  const SAMPLES: Record<string, () => { query: string; params?: Record<string, string> }> = {
    listCompatEvents: () => ({ query: 'series_ticker=PXS1&order=volume&ascending=true&limit=5' }),
    listCompatEventsKeyset: () => ({ query: 'tag_slug=pt-a&order=title&limit=1' }),
    listCompatEventsPaginated: () => ({ query: 'recurrence=px-daily&limit=1&active=false&closed=true' }),
    listCompatEventResults: () => ({ query: 'order=closed_time&limit=3&series_ticker=PXS2' }),
    listEventCreators: () => ({ query: 'order=creatorName&ascending=true&limit=3&offset=7' }),
    getEventCreator: () => ({ query: '', params: { id: creatorId } }),
    getCompatEventTweetCount: () => ({ query: '', params: { id: 'PX1' } }),
    countCompatEventComments: () => ({ query: '', params: { id: fx.PX1! } }),
    listCompatSeries: () => ({ query: 'recurrence=bulk&order=title&limit=3&offset=2' }),
    getCompatSeries: () => ({ query: '', params: { id: 'PXS2' } }),
    countCompatSeriesComments: () => ({ query: '', params: { id: seriesIds.PXS1! } }),
    getCompatSeriesSummary: () => ({ query: '', params: { id: 'PXS2' } }),
    getCompatSeriesSummaryBySlug: () => ({ query: '', params: { slug: 'pxs2' } }),
    searchPublic: () => ({ query: 'q=params&limit_per_type=2&events_status=active' }),
  };
  const handlers = [...new Set(catalogueOperations.map((o) => o.handler))].filter((h) => pathsOf(h).length > 1);

  it('covers every implementation that has an alias', () => {
    expect(handlers.filter((h) => !(h in SAMPLES))).toEqual([]);
  });

  it.each(handlers.map((h) => [pathsOf(h).join(' = '), h] as const))('%s', async (_, handler) => {
    const { query, params = {} } = SAMPLES[handler]!();
    const bodies = [];
    for (const path of pathsOf(handler)) {
      const concrete = Object.entries(params).reduce((p, [name, value]) => p.replace(`{${name}}`, encodeURIComponent(value)), path);
      bodies.push(await get(`${concrete}${query ? `?${query}` : ''}`));
    }
    expect(rowsOf(handler, bodies[0]) ?? bodies[0]).not.toEqual([]);
    for (const body of bodies.slice(1)) expect(body).toEqual(bodies[0]);
  });

  it('takes one path\'s keyset cursor on the other', async () => {
    const [canonical, alias] = pathsOf('listCompatEventsKeyset');
    const first = await get(`${canonical}?tag_slug=pt-a&order=title&limit=1`);
    expect(await get(`${alias}?tag_slug=pt-a&order=title&limit=1&after_cursor=${first.next_cursor}`)).toEqual(await get(`${canonical}?tag_slug=pt-a&order=title&limit=1&after_cursor=${first.next_cursor}`));
  });
});

describe('every spelling of every shared filter, on every event list that takes it', () => {
  /** [query, on the ACTIVE lists (/events, /events/pagination, /events/keyset), on /events/results (null: not a results filter, ignored)]. */
  const FILTERS: Array<[string, string[], string[] | null]> = [
    ['series_ticker=PXS1', ['PX1', 'PX2'], []],
    ['seriesTicker=PXS2', ['PX3'], ['PX3', 'PX4', 'PX5']],
    ['recurrence=PX-Daily', ['PX3'], null],
    ['slug=px1,PX2', ['PX1', 'PX2'], []],
    ['slug=px1&slug=px3', ['PX1', 'PX3'], ['PX3']],
    ['id=<PX1>,PX3', ['PX1', 'PX3'], ['PX3']],
    ['id=PX4&id=<PX5>', [], ['PX4', 'PX5']],
    ['tag_id=<pt-a>', ['PX1', 'PX3'], ['PX3', 'PX4']],
    ['tag_id=pt-a', ['PX1', 'PX3'], ['PX3', 'PX4']],
    ['tagId=pt-c', ['PX3'], ['PX3', 'PX5']],
    ['tag_slug=pt-b', ['PX2'], ['PX4']],
    ['tagSlug=pt-b,pt-c', ['PX2', 'PX3'], ['PX3', 'PX4', 'PX5']],
    ['tag_id=pt-a&tag_slug=pt-c', ['PX3'], ['PX3']],
    ['exclude_tag_id=pt-a', ['PX2'], ['PX5']],
    ['excludeTagId=<pt-c>,pt-b', ['PX1'], []],
    ['tag_slug=pt-rel', [], []],
    ['tag_slug=pt-rel&related_tags=true', ['PX1', 'PX3'], ['PX3', 'PX4']],
    ['tag_slug=pt-rel&relatedTags=true', ['PX1', 'PX3'], ['PX3', 'PX4']],
    ['tag_slug=pt-rel&related_tags=false', [], []],
    ...['liquidity_min', 'liquidityMin', 'liquidity_num_min', 'liquidityNumMin'].map((n): [string, string[], null] => [`${n}=50.25`, ['PX1', 'PX3'], null]),
    ...['liquidity_max', 'liquidityMax', 'liquidity_num_max', 'liquidityNumMax'].map((n): [string, string[], null] => [`${n}=50.25`, ['PX1', 'PX2'], null]),
    ...['volume_min', 'volumeMin', 'volume_num_min', 'volumeNumMin'].map((n): [string, string[], null] => [`${n}=100.5`, ['PX1', 'PX2'], null]),
    ...['volume_max', 'volumeMax', 'volume_num_max', 'volumeNumMax'].map((n): [string, string[], null] => [`${n}=0.00000001`, ['PX3'], null]),
    ['liquidity_min=0&liquidityNumMin=100', ['PX1', 'PX2', 'PX3'], null],
    ...['start_date_min', 'startDateMin'].map((n): [string, string[], null] => [`${n}=2098-01-01 12:00:00`, ['PX2'], null]),
    ...['start_date_max', 'startDateMax'].map((n): [string, string[], null] => [`${n}=2020-06-01`, ['PX1'], null]),
    ...['end_date_min', 'endDateMin'].map((n): [string, string[], null] => [`${n}=2098-06-01T00:00:00Z`, ['PX1', 'PX2'], null]),
    ...['end_date_max', 'endDateMax'].map((n): [string, string[], null] => [`${n}=2021-03-02T01:00:00%2B01:00`, ['PX3'], null]),
  ];
  const FIXTURES = 'slug=px1,px2,px3,px4,px5';
  const resolve = (query: string) => query.replace(/<(PX\d)>/g, (_, t: string) => fx[t]!).replace(/<(pt-\w+)>/g, (_, t: string) => tag[t]!);
  const LISTS: Array<[string, (body: any) => Array<{ id: string }>, 'active' | 'results']> = [
    ...pathsOf('listCompatEvents').map((p): [string, (b: any) => any, 'active'] => [p, (b) => b, 'active']),
    ...pathsOf('listCompatEventsPaginated').map((p): [string, (b: any) => any, 'active'] => [p, (b) => b.data, 'active']),
    ...pathsOf('listCompatEventsKeyset').map((p): [string, (b: any) => any, 'active'] => [p, (b) => b.events, 'active']),
    ...pathsOf('listCompatEventResults').map((p): [string, (b: any) => any, 'results'] => [p, (b) => b, 'results']),
  ];

  it.each(FILTERS)('%s', async (query, active, results) => {
    // the fixture events only (a slug or id filter under test restricts by itself)
    const restrict = /^(slug|id)=/.test(query) ? '' : `&${FIXTURES}`;
    for (const [path, rows, kind] of LISTS) {
      const expected = kind === 'active' ? active : (results ?? ['PX3', 'PX4', 'PX5']);
      const body = await get(`${path}?${resolve(query)}${restrict}&order=id&ascending=true&limit=100`);
      expect(ids(rows(body)), `${path}?${query}`).toEqual(fxIds(...expected));
    }
  });
});

describe('date bounds to the precision the database keeps (microseconds)', () => {
  it.each(['start_date', 'end_date', 'start_time'])('%s_min and _max are inclusive to the microsecond', async (name) => {
    const at = '2097-03-04T05:06:07.000500Z';
    const [row] = await api.db('events')
      .insert({ ticker: 'PXU', slug: 'pxu', series_id: seriesIds.PXS1, title: 'Microseconds', start_date: name === 'end_date' ? '2090-01-01T00:00:00Z' : at, strike_date: name === 'end_date' ? at : '2099-12-31T00:00:00Z' })
      .returning('id');
    try {
      const lists = name === 'start_time' ? pathsOf('listCompatEventsKeyset') : [...pathsOf('listCompatEvents'), ...pathsOf('listCompatEventsKeyset')];
      const cases: Array<[string, boolean]> = [
        [`${name}_min=2097-03-04T05:06:07.000499Z`, true],
        [`${name}_min=2097-03-04T05:06:07.0005Z`, true],
        [`${name}_min=2097-03-04T05:06:07.000501Z`, false],
        [`${name}_min=2097-03-04T05:06:07.0004999Z`, true],
        [`${name}_min=2097-03-04T05:06:07.0005001Z`, false],
        [`${name}_max=2097-03-04T05:06:07.0005009Z`, true],
        [`${name}_min=2097-03-04T07:06:07.0006%2B02:00`, false],
        [`${name}_max=2097-03-04T05:06:07.000500Z`, true],
        [`${name}_max=2097-03-04T05:06:07.000499999Z`, false],
        [`${name}_max=2097-03-04T05:06:07Z`, false],
      ];
      for (const path of lists) {
        for (const [query, found] of cases) {
          const body = await get(`${path}?slug=pxu&${query}`);
          expect(ids(Array.isArray(body) ? body : body.events), `${path}?${query}`).toEqual(found ? [String(row.id)] : []);
        }
      }
    } finally {
      await api.db('events').where({ id: row.id }).delete();
    }
  });
});

describe('every order key both ways on the offset lists the other files do not walk', () => {
  const ENDED = `(e.status <> 'ACTIVE' or e.strike_date <= now())`;
  const EVENT_KEYS: Record<string, string> = {
    id: 'e.id', ticker: 'e.ticker', slug: 'e.slug', title: 'e.title', createdAt: 'e.created_at', start_date: 'e.start_date', updatedAt: 'e.updated_at',
    endDate: 'e.strike_date', volume: 'e.volume', volume_24hr: 'e.volume', liquidity: 'e.liquidity', openInterest: 'e.open_interest', closed_time: 'e.closed_time', competitive: 'e.liquidity',
  };
  it.each(Object.keys(EVENT_KEYS))('/events/results and /events/pagination by %s', async (key) => {
    for (const ascending of [true, false]) {
      const dir = ascending ? 'asc' : 'desc';
      const order = `${EVENT_KEYS[key]} ${dir}, e.id ${dir}`;
      const results = await oracle(`select e.id from events e where ${ENDED} order by ${order} limit 100 offset 4000`);
      expect(ids(await get(`/events/results?order=${key}&ascending=${ascending}&limit=100&offset=4000`)), `results ${key} ${dir}`).toEqual(results);
      const inactive = await oracle(`select e.id from events e where e.status <> 'ACTIVE' order by ${order} limit 50 offset 6000`);
      const page = await get(`/events/pagination?order=${key}&ascending=${ascending}&active=false&closed=true&limit=50&offset=6000`);
      expect(ids(page.data), `pagination ${key} ${dir}`).toEqual(inactive);
      expect(page.pagination).toEqual({ hasMore: true, totalResults: 10_000 });
    }
  });

  const CREATOR_KEYS: Record<string, string> = { id: 'u.id', creatorName: 'u.name', creatorHandle: 'u.username', createdAt: 'u.created_at', updatedAt: 'u.updated_at' };
  it.each(Object.keys(CREATOR_KEYS))('/events/creators by %s', async (key) => {
    for (const ascending of [true, false]) {
      const dir = ascending ? 'asc' : 'desc';
      const expected = await oracle(
        `select u.id from users u where exists (select 1 from events e where e.creator_id = u.id) order by ${CREATOR_KEYS[key]} ${dir}, u.id ${dir} limit 100 offset 3000`,
      );
      expect(ids(await get(`/events/creators?order=${key}&ascending=${ascending}&limit=100&offset=3000`)), `${key} ${dir}`).toEqual(expected);
    }
  });
});

describe('page sizes: the default, and the maximum a larger limit is clamped to (from the document)', () => {
  /** A query per implementation that matches more rows than its maximum. */
  const QUERIES: Record<string, string> = {
    searchCatalogue: 'q=bulk',
    searchPublic: 'q=bulk&search_tags=false&search_profiles=false',
    listCompatEventResults: '',
    listMarkets: '',
  };
  const lists = catalogueOperations
    .map((operation) => ({ operation, limit: operation.parameters.filter((p) => p.clampMaximum !== undefined) }))
    .filter(({ limit }) => limit.length > 0);

  it('lists every list with a clamped page size', () => {
    expect(lists.map(({ operation }) => operation.path).sort()).toEqual(
      [...pathsOf('listEvents'), ...pathsOf('listSeries'), ...pathsOf('listMarkets'), ...pathsOf('searchCatalogue'), ...pathsOf('listCompatEvents'), ...pathsOf('listCompatEventsKeyset'),
        ...pathsOf('listCompatEventsPaginated'), ...pathsOf('listCompatEventResults'), ...pathsOf('listEventCreators'), ...pathsOf('listCompatSeries'), ...pathsOf('searchPublic')].sort(),
    );
    const maxima = Object.fromEntries(lists.map(({ operation, limit }) => [operation.path, limit[0]!.clampMaximum]));
    expect(maxima).toMatchObject({ '/api/events': 100, '/api/series': 100, '/api/markets': 100, '/events': 100, '/events/pagination': 100, '/events/results': 100, '/events/creators': 100, '/series': 100, '/events/keyset': 500, '/api/search': 30, '/public-search': 50 });
  });

  it.each(lists.map(({ operation, limit }) => [operation.path, operation, limit] as const))('%s', async (_, operation, limit) => {
    const base = QUERIES[operation.handler] ?? '';
    const url = (extra: string) => `${operation.path}?${[base, extra].filter(Boolean).join('&')}`;
    const rows = async (extra: string) => rowsOf(operation.handler, await get(url(extra))).length;
    const documentedDefault = (limit[0]!.default as number | undefined) ?? 10; // limit_per_type states its default (10) in prose
    expect(await rows(''), 'default page size').toBe(documentedDefault);
    for (const parameter of limit) {
      const maximum = parameter.clampMaximum!;
      expect(await rows(`${parameter.name}=${maximum}`), `${parameter.name}=${maximum}`).toBe(maximum);
      const exact = await get(url(`${parameter.name}=${maximum}`));
      for (const above of [maximum + 1, maximum * 10, '99999999999999999999']) {
        expect(await get(url(`${parameter.name}=${above}`)), `${parameter.name}=${above} is clamped`).toEqual(exact);
      }
    }
  });
});

describe('the 10,000-row scan window of every offset list', () => {
  const ORACLES: Record<string, string> = {
    listCompatEvents: `select e.id from events e where e.status = 'ACTIVE' order by e.created_at desc, e.id desc`,
    listCompatEventsPaginated: `select e.id from events e where e.status = 'ACTIVE' order by e.created_at desc, e.id desc`,
    listCompatEventResults: `select e.id from events e where (e.status <> 'ACTIVE' or e.strike_date <= now()) order by e.created_at desc, e.id desc`,
    listEventCreators: `select u.id from users u where exists (select 1 from events e where e.creator_id = u.id) order by u.updated_at desc, u.id desc`,
    listCompatSeries: `select s.id from series s order by s.created_at desc, s.id desc`,
  };
  const offsetLists = catalogueOperations.filter((o) => o.parameters.some((p) => p.name === 'offset' && p.scanWindow !== undefined));

  it('lists every offset list', () => {
    expect([...new Set(offsetLists.map((o) => o.handler))].sort()).toEqual(Object.keys(ORACLES).sort());
    expect(offsetLists.every((o) => o.parameters.find((p) => p.name === 'offset')!.scanWindow === 10_000)).toBe(true);
  });

  it.each(offsetLists.map((o) => [o.path, o] as const))('%s', async (_, operation: CatalogueOperation) => {
    const all = await oracle(`${ORACLES[operation.handler]} limit 10100`);
    expect(all.length, 'more rows than the window').toBeGreaterThan(10_050);
    const rows = (body: any) => ids(rowsOf(operation.handler, body));
    // the last full page inside the window, the page that crosses it (cut), and pages past it (empty)
    expect(rows(await get(`${operation.path}?offset=9900&limit=100`))).toEqual(all.slice(9900, 10_000));
    const cut = await get(`${operation.path}?offset=9990&limit=50`);
    expect(rows(cut)).toEqual(all.slice(9990, 10_000));
    for (const offset of [10_000, 10_001, 10_049, 2 ** 31, '99999999999999999999']) {
      const beyond = await get(`${operation.path}?offset=${offset}&limit=5`);
      expect(rows(beyond), `offset=${offset}`).toEqual([]);
      if (operation.handler === 'listCompatEventsPaginated') expect(beyond.pagination).toEqual({ hasMore: false, totalResults: 10_000 });
    }
    if (operation.handler === 'listCompatEventsPaginated') expect(cut.pagination).toEqual({ hasMore: false, totalResults: 10_000 });
  });
});

describe('parameters that return no rows or have no effect, exactly as their descriptions say', () => {
  const NO_ROWS_LIST = ['listCompatEvents', 'listCompatEventsPaginated'].flatMap((h) => pathsOf(h).map((p) => [p, h] as const));

  it.each(NO_ROWS_LIST)('%s: archived, featured, cyom true return no rows; false, include_chat and include_template change nothing', async (path, handler) => {
    const base = await get(`${path}?series_ticker=PXS1`);
    expect(rowsOf(handler, base)).toHaveLength(2);
    const empty = handler === 'listCompatEvents' ? [] : { data: [], pagination: { hasMore: false, totalResults: 0 } };
    for (const flag of ['archived', 'featured', 'cyom']) {
      expect(await get(`${path}?series_ticker=PXS1&${flag}=true`), `${flag}=true`).toEqual(empty);
      expect(await get(`${path}?${flag}=true`), `${flag}=true alone`).toEqual(empty);
      expect(await get(`${path}?series_ticker=PXS1&${flag}=false`), `${flag}=false`).toEqual(base);
    }
    for (const flag of ['include_chat', 'include_template']) {
      for (const value of [true, false]) expect(await get(`${path}?series_ticker=PXS1&${flag}=${value}`), `${flag}=${value}`).toEqual(base);
    }
  });

  it.each(pathsOf('listCompatEventsKeyset'))('%s: game_id, event_week, created_by, parent_event_id give an empty set; the compatibility flags change nothing; offset is 422', async (path) => {
    const base = await get(`${path}?limit=7`);
    expect(base.events).toHaveLength(7);
    for (const query of ['game_id=1', 'game_id=abc', 'event_week=0', 'event_week=47', 'event_week=-3', `created_by=${creatorId}`, 'created_by=pcreator', 'parent_event_id=0', 'parent_event_id=1', 'game_id=1&order=volume']) {
      expect(await get(`${path}?limit=7&${query}`), query).toEqual({ events: [], next_cursor: null });
    }
    for (const query of ['featured_order=true', 'include_children=false', 'include_best_lines=true', 'partner_slug=acme', 'tag_match=any', 'locale=de', 'featured_order=false&include_children=true&include_best_lines=false&partner_slug=&tag_match=all&locale=en-US']) {
      expect(await get(`${path}?limit=7&${query}`), query).toEqual(base);
    }
    // series_id: unmatched numeric ids give an empty set; a matched one among them still matches
    for (const query of ['series_id=99999999', 'series_id=0', 'series_id=99999999,88888888', 'series_id=99999999&series_id=1234567890123']) {
      expect(await get(`${path}?limit=7&${query}`), query).toEqual({ events: [], next_cursor: null });
    }
    expect(ids((await get(`${path}?series_id=99999999,${seriesIds.PXS1}&order=id`)).events)).toEqual(fxIds('PX1', 'PX2'));
    for (const value of ['0', '20', '-1', 'abc', '', '10000']) {
      const error = await get(`${path}?offset=${value}`, 422);
      expect(error.error.code).toBe('unprocessable');
      expect(error.error.message).toMatch(/after_cursor/);
    }
    // 422 even with a valid cursor: offset is never combined with it
    await get(`${path}?offset=0&after_cursor=${base.next_cursor}`, 422);
  });

  it.each(pathsOf('listCompatSeries'))('%s: closed true returns no rows; include_chat and exclude_events change nothing', async (path) => {
    const base = await get(`${path}?slug=PXS1,PXS2`);
    expect(base).toHaveLength(2);
    expect(await get(`${path}?slug=PXS1,PXS2&closed=true`)).toEqual([]);
    expect(await get(`${path}?closed=true`)).toEqual([]);
    expect(await get(`${path}?slug=PXS1,PXS2&closed=false`)).toEqual(base);
    for (const query of ['include_chat=true', 'include_chat=false', 'exclude_events=true', 'exclude_events=false']) expect(await get(`${path}?slug=PXS1,PXS2&${query}`), query).toEqual(base);
  });

  it.each(pathsOf('listCompatEventResults'))('%s: the parameters outside its subset are ignored', async (path) => {
    const base = await get(`${path}?series_ticker=PXS2`);
    expect(ids(base)).toEqual(fxIds('PX5', 'PX4', 'PX3'));
    for (const query of ['active=true', 'closed=false', 'archived=true', 'featured=true', 'cyom=true', 'recurrence=nope', 'volume_min=1000', 'liquidity_max=0', 'start_date_min=2099-01-01', 'end_date_max=2000-01-01', 'live=true', 'title_search=nope']) {
      expect(await get(`${path}?series_ticker=PXS2&${query}`), query).toEqual(base);
    }
  });

  it.each(pathsOf('searchPublic'))('%s: pages after 1 are empty with hasMore false; cache, optimized, sort and ascending change nothing', async (path) => {
    const first = await get(`${path}?q=params&limit_per_type=1`);
    expect(first.events).toHaveLength(1);
    expect(first.pagination.hasMore).toBe(true);
    for (const page of [2, 3, 1000, 9_007_199_254_740_991]) {
      expect(await get(`${path}?q=params&limit_per_type=1&page=${page}`), `page=${page}`).toEqual({ events: [], tags: [], profiles: [], pagination: { hasMore: false, totalResults: first.pagination.totalResults } });
    }
    expect(await get(`${path}?q=params&limit_per_type=1&page=1`)).toEqual(first);
    for (const query of ['cache=true', 'cache=false', 'optimized=true', 'sort=volume', 'sort=nonsense', 'ascending=true', 'ascending=false']) {
      expect(await get(`${path}?q=params&limit_per_type=1&${query}`), query).toEqual(first);
    }
  });

  it('/api/search: text shorter than two characters (code points, after trimming) gives an empty result, not an error', async () => {
    for (const q of ['', ' ', 'p', ' p ', '\tP\n', '😀', '中', 'é', '%']) {
      expect(await get(`/api/search?q=${encodeURIComponent(q)}`), JSON.stringify(q)).toEqual({ query: q.trim(), results: [] });
    }
    // NUL cannot be stored or compared as text: refused, naming the parameter
    const nul = await api.get(`/api/search?q=${encodeURIComponent('\u0000p')}`);
    expect(nul.status).toBe(400);
    expect(nul.body.error.message).toBe("query parameter 'q' contains a NUL character");
    expect((await get('/api/search?q=px')).results.length).toBeGreaterThan(0);
    expect((await get(`/api/search?q=${encodeURIComponent('😀😀')}`)).query).toBe('😀😀');
  });
});

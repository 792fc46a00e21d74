/* eslint max-lines: ["error", { "max": 650, "skipBlankLines": true, "skipComments": true }] -- its cases share one running service (an embedded PostgreSQL) and its fixtures: a split would start another */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { generateCatalogue } from '../../src/db/seed/generator.js';
import { encodeCursor } from '../../src/domain/pagination/cursor.js';
import { TestService } from '../support/service.js';

/**
 * Compatibility events and event creators. A generated catalogue of ~46,000 events (about half ACTIVE, so
 * keyset pages 20,000 rows deep and the 10,000-row scan window are reachable) plus hand-made fixtures
 * (tickers FX1..FX5, series FXS1/FXS2, tags fx-*) whose every field is known.
 */

let api: TestService;
const fx: Record<string, string> = {};
const tag: Record<string, string> = {};
const users: Record<string, { id: string }> = {};
let fxs1 = '';

const iso = (s: string) => new Date(s);

beforeAll(async () => {
  api = await TestService.start();
  for (const [key, name, username] of [['alice', 'Alice Maker', 'alice'], ['bob', 'Bob Trader', 'bobby'], ['carol', 'Carol Nobody', 'carol'], ['dave', 'x', 'dave_x']] as const) {
    users[key] = (await api.register({ name, username })).user;
  }
  await api.db('users').where({ id: users.dave!.id }).update({ name: '' });
  await api.db('users').where({ id: users.alice!.id }).update({ avatar_url: 'https://img.example/alice.png', created_at: iso('2024-01-01T00:00:00Z'), updated_at: iso('2024-06-01T00:00:00Z') });
  await api.db('users').where({ id: users.bob!.id }).update({ created_at: iso('2024-02-01T00:00:00Z'), updated_at: iso('2024-05-01T00:00:00Z') });
  await api.db('users').where({ id: users.dave!.id }).update({ created_at: iso('2024-03-01T00:00:00Z'), updated_at: iso('2024-04-01T00:00:00Z') });

  await generateCatalogue(api.db, { events: 46_000, eventsPerSeries: 12, marketsPerEvent: 1, creatorIds: [users.alice!.id, users.bob!.id], commentsPerMarket: 1 });

  const db = api.db;
  const [category] = await db('categories').insert({ slug: 'fx-cat', name: 'Fixtures' }).returning('id');
  for (const slug of ['fx-alpha', 'fx-beta', 'fx-gamma', 'fx-solo', 'fx-related']) {
    const [row] = await db('tags').insert({ slug, label: slug.toUpperCase() }).returning('id');
    tag[slug] = String(row.id);
  }
  const [s1] = await db('series').insert({ ticker: 'FXS1', slug: 'fxs1', title: 'Fixture series one', category_id: category.id, frequency: 'fx-biweekly' }).returning('id');
  const [s2] = await db('series').insert({ ticker: 'FXS2', slug: 'fxs2', title: 'Fixture series two', category_id: category.id, frequency: 'fx-quarterly' }).returning('id');
  fxs1 = String(s1.id);
  const events = [
    { ticker: 'FX1', series_id: s1.id, title: 'Fixture alpha 100%', status: 'ACTIVE', start_date: '2020-06-01T00:00:00Z', strike_date: '2099-01-01T00:00:00Z', closed_time: null, volume: '100.5', liquidity: '50.25', open_interest: '10', mutually_exclusive: true, creator_id: users.alice!.id, tags: ['fx-alpha'] },
    { ticker: 'FX2', series_id: s1.id, title: 'Fixture beta', status: 'ACTIVE', start_date: '2098-01-01T12:00:00Z', strike_date: '2098-06-01T00:00:00Z', closed_time: null, volume: '200', liquidity: '0', open_interest: '0', mutually_exclusive: false, creator_id: users.alice!.id, tags: ['fx-beta'] },
    { ticker: 'FX3', series_id: s2.id, title: 'Fixture gamma', status: 'ACTIVE', start_date: '2021-03-01T10:00:00Z', strike_date: '2021-03-02T00:00:00Z', closed_time: null, volume: '0.00000001', liquidity: '999999.99999999', open_interest: '1', mutually_exclusive: false, creator_id: null, tags: ['fx-alpha', 'fx-solo'] },
    { ticker: 'FX4', series_id: s2.id, title: 'Fixture delta', status: 'CLOSED', start_date: '2021-04-01T00:00:00Z', strike_date: '2021-04-02T00:00:00Z', closed_time: '2021-04-02T00:00:00Z', volume: '300', liquidity: '0', open_interest: '0', mutually_exclusive: false, creator_id: users.bob!.id, tags: ['fx-alpha', 'fx-beta'] },
    { ticker: 'FX5', series_id: s2.id, title: 'Fixture epsilon', status: 'RESOLVED', start_date: '2021-05-01T00:00:00Z', strike_date: '2021-05-02T00:00:00Z', closed_time: '2021-05-03T00:00:00Z', volume: '0', liquidity: '0', open_interest: '0', mutually_exclusive: true, creator_id: users.dave!.id, tags: ['fx-gamma'] },
  ];
  for (const [i, { tags, ...event }] of events.entries()) {
    const stamp = iso(`2019-01-01T00:00:0${i + 1}Z`);
    const [row] = await db('events')
      .insert({ ...event, slug: event.ticker.toLowerCase(), description: `About ${event.ticker}`, start_date: iso(event.start_date), strike_date: iso(event.strike_date), closed_time: event.closed_time && iso(event.closed_time), created_at: stamp, updated_at: stamp })
      .returning('id');
    fx[event.ticker] = String(row.id);
    await db('event_tags').insert(tags.map((t) => ({ event_id: row.id, tag_id: tag[t] })));
  }
  const market = async (ticker: string, event: string, fields: Record<string, unknown>, tags: string[]) => {
    const [row] = await db('markets').insert({ ticker, event_id: fx[event], title: ticker, ...fields }).returning('id');
    if (tags.length > 0) await db('market_tags').insert(tags.map((t) => ({ market_id: row.id, tag_id: tag[t] })));
    return String(row.id);
  };
  const m1 = await market('FX1-M1', 'FX1', { last_yes_price: '0.62', last_no_price: '0.38', volume: '60.5', liquidity: '50.25', open_interest: '6' }, ['fx-alpha', 'fx-related']);
  const m2 = await market('FX1-M2', 'FX1', { last_yes_price: '0.33', last_no_price: '0.67', volume: '40', liquidity: '0', open_interest: '4' }, ['fx-alpha']);
  await market('FX4-M1', 'FX4', { status: 'CLOSED', volume: '300' }, []);
  await market('FX5-M1', 'FX5', { status: 'RESOLVED', result: 'yes' }, []);
  await market('FX5-M2', 'FX5', { status: 'RESOLVED', result: 'no' }, []);
  await market('FX5-M3', 'FX5', { status: 'RESOLVED', result: 'invalid' }, []);
  await db('comments').insert([
    { market_id: m1, author_id: users.bob!.id, body: 'one' },
    { market_id: m1, author_id: users.bob!.id, body: 'two' },
    { market_id: m1, author_id: users.bob!.id, body: 'hidden', hidden: true },
    { market_id: m2, author_id: users.carol!.id, body: 'three' },
  ]);
  await db.raw('analyze');
  // 46,000 generated events and their markets, each written with its search words and their index entries.
}, 300_000);
afterAll(() => api?.stop());

const ids = (items: Array<{ id: string }>) => items.map((e) => e.id);
const fxIds = (...tickers: string[]) => tickers.map((t) => fx[t]!);
/** The fixtures only, whatever else matches. */
const FX_ALL = 'slug=fx1,fx2,fx3,fx4,fx5';

async function oracle(where: string, order: string, limit = 100_000, offset = 0): Promise<string[]> {
  const result = await api.db.raw(`select e.id from events e join series s on s.id = e.series_id where ${where} order by ${order} limit ${limit} offset ${offset}`);
  return result.rows.map((r: { id: string }) => String(r.id));
}

/**
 * Checks a list that depends on the time (`now()` in `where`) against the oracle read just before and just
 * after it: the catalogue's strike dates fall every few seconds around now (its 5-minute series), so one
 * may pass between the request and a single oracle read.
 */
async function expectAsOracle(answer: () => Promise<string[]>, where: string, order: string, limit?: number, offset?: number): Promise<void> {
  const before = await oracle(where, order, limit, offset);
  const got = await answer();
  const after = await oracle(where, order, limit, offset);
  expect([before, after]).toContainEqual(got);
}

async function get(path: string, status = 200) {
  const response = await api.get(path);
  expect(response.status, `${path}: ${JSON.stringify(response.body).slice(0, 300)}`).toBe(status);
  return response.body;
}

const LIST_FIELDS = ['id', 'ticker', 'slug', 'title', 'description', 'startDate', 'creationDate', 'endDate', 'active', 'closed', 'archived', 'commentsEnabled', 'enableOrderBook', 'negRisk', 'enableNegRisk', 'eventDate', 'seriesSlug', 'live', 'ended'];
const KEYSET_FIELDS = ['id', 'ticker', 'slug', 'title', 'description', 'startDate', 'endDate', 'createdAt', 'updatedAt', 'active', 'closed', 'enableOrderBook', 'negRisk', 'seriesSlug'];
const sorted = (keys: string[]) => [...keys].sort();

const LIST_ORDER: Record<string, string> = {
  id: 'e.id', ticker: 'e.ticker', slug: 'e.slug', title: 'e.title', createdAt: 'e.created_at', start_date: 'e.start_date', updatedAt: 'e.updated_at',
  endDate: 'e.strike_date', volume: 'e.volume', volume_24hr: 'e.volume', liquidity: 'e.liquidity', openInterest: 'e.open_interest', closed_time: 'e.closed_time', competitive: 'e.liquidity',
};

describe('GET /events', () => {
  it('lists ACTIVE events, newest first, 20 by default, in the list field set; the alias answers the same', async () => {
    const body = await get('/events');
    expect(ids(body)).toEqual(await oracle(`e.status = 'ACTIVE'`, 'e.created_at desc, e.id desc', 20));
    for (const event of body) {
      expect(sorted(Object.keys(event))).toEqual(sorted(LIST_FIELDS));
      expect(event.startDate).toMatch(/\+00:00$/);
      expect(event.active).toBe(true);
    }
    expect(await get('/api/compat/events')).toEqual(body);
  });

  it('presents every field of an event', async () => {
    const [fx1] = await get('/events?slug=fx1');
    expect(fx1).toEqual({
      id: fx.FX1, ticker: 'FX1', slug: 'fx1', title: 'Fixture alpha 100%', description: 'About FX1',
      startDate: '2020-06-01T00:00:00.000+00:00', creationDate: '2019-01-01T00:00:01.000+00:00', endDate: '2099-01-01T00:00:00.000+00:00',
      active: true, closed: false, archived: false, commentsEnabled: true, enableOrderBook: true, negRisk: true, enableNegRisk: true,
      eventDate: '2020-06-01', seriesSlug: 'fxs1', live: true, ended: false,
    });
    const [fx2, fx3] = await get('/events?slug=fx2,fx3&order=id&ascending=true');
    expect(fx2).toMatchObject({ live: false, ended: false, negRisk: false, eventDate: '2098-01-01' });
    expect(fx3).toMatchObject({ active: true, live: false, ended: true });
  });

  it.each(Object.keys(LIST_ORDER))('orders by %s both ways, ties by id', async (key) => {
    const state = key === 'closed_time' ? `e.status <> 'ACTIVE'` : `e.status = 'ACTIVE'`;
    const query = key === 'closed_time' ? '&active=false&closed=true' : '';
    for (const ascending of [true, false]) {
      const dir = ascending ? 'asc' : 'desc';
      const page1 = await get(`/events?order=${key}&ascending=${ascending}&limit=100${query}`);
      const page2 = await get(`/events?order=${key}&ascending=${ascending}&limit=100&offset=100${query}`);
      expect([...ids(page1), ...ids(page2)]).toEqual(await oracle(state, `${LIST_ORDER[key]} ${dir}, e.id ${dir}`, 200));
    }
  });

  it('takes the first key of a comma-separated order and refuses unknown keys naming the allowed ones', async () => {
    expect(await get('/events?order=volume,createdAt&limit=50')).toEqual(await get('/events?order=volume&limit=50'));
    const error = await get('/events?order=popularity', 400);
    expect(error.error.message).toBe('order must be one of: id, ticker, slug, title, createdAt, start_date, updatedAt, endDate, volume, volume_24hr, liquidity, openInterest, closed_time, competitive');
    await get('/events?order=created_at', 400);
  });

  it('follows active and closed as the description of GET /events says', async () => {
    expect(ids(await get(`/events?${FX_ALL}&order=id&ascending=true`))).toEqual(fxIds('FX1', 'FX2', 'FX3'));
    expect(await get(`/events?${FX_ALL}&closed=true`)).toEqual([]);
    expect(ids(await get(`/events?${FX_ALL}&active=false&closed=true&order=id&ascending=true`))).toEqual(fxIds('FX4', 'FX5'));
    expect(ids(await get(`/events?${FX_ALL}&active=false&order=id&ascending=true`))).toEqual(fxIds('FX1', 'FX2', 'FX3'));
    expect(ids(await get(`/events?${FX_ALL}&active=true&closed=false&order=id&ascending=true`))).toEqual(fxIds('FX1', 'FX2', 'FX3'));
    const inactive = await get('/events?active=false&closed=true&limit=100');
    expect(ids(inactive)).toEqual(await oracle(`e.status <> 'ACTIVE'`, 'e.created_at desc, e.id desc', 100));
    expect(inactive.every((e: { closed: boolean; ended: boolean }) => e.closed && e.ended)).toBe(true);
  });

  it('returns no rows for archived, featured or cyom true; ignores them when false, and include_chat/include_template', async () => {
    const base = await get(`/events?${FX_ALL}`);
    expect(base).toHaveLength(3);
    for (const flag of ['archived', 'featured', 'cyom']) {
      expect(await get(`/events?${FX_ALL}&${flag}=true`)).toEqual([]);
      expect(await get(`/events?${FX_ALL}&${flag}=false`)).toEqual(base);
    }
    expect(await get(`/events?${FX_ALL}&include_chat=true&include_template=true`)).toEqual(base);
    await get(`/events?archived=maybe`, 400);
  });

  it('clamps limit to 100, pages by offset and stops at the 10,000-row scan window', async () => {
    expect(await get('/events?limit=5000')).toHaveLength(100);
    expect(await get('/events?limit=1')).toHaveLength(1);
    for (const bad of ['limit=0', 'limit=abc', 'limit=1.5', 'offset=-1', 'offset=abc']) await get(`/events?${bad}`, 400);
    const pages = [...ids(await get('/events?limit=30')), ...ids(await get('/events?limit=30&offset=30'))];
    expect(pages).toEqual(await oracle(`e.status = 'ACTIVE'`, 'e.created_at desc, e.id desc', 60));
    expect(new Set(pages).size).toBe(60);
    const inactive = Number((await api.db('events').whereNot('status', 'ACTIVE').count('* as n'))[0]!.n);
    expect(inactive).toBeGreaterThan(10_020);
    const edge = await get('/events?active=false&closed=true&order=id&ascending=true&offset=9990&limit=100');
    expect(ids(edge)).toEqual(await oracle(`e.status <> 'ACTIVE'`, 'e.id asc', 10, 9990));
    expect(await get('/events?active=false&closed=true&offset=10000')).toEqual([]);
    expect(await get('/events?offset=99999999999')).toEqual([]);
  });

  describe('shared filters', () => {
    const fxList = async (query: string) => ids(await get(`/events?${query}&order=id&ascending=true&limit=100`));

    it('series_ticker / seriesTicker and recurrence (case-insensitive)', async () => {
      expect(await fxList('series_ticker=FXS1')).toEqual(fxIds('FX1', 'FX2'));
      expect(await fxList('seriesTicker=FXS1')).toEqual(fxIds('FX1', 'FX2'));
      expect(await fxList('series_ticker=FXS1&seriesTicker=FXS2')).toEqual(fxIds('FX1', 'FX2'));
      expect(await fxList('series_ticker=NOPE')).toEqual([]);
      expect(await fxList('recurrence=FX-Biweekly')).toEqual(fxIds('FX1', 'FX2'));
      const weekly = await get('/events?recurrence=weekly&limit=100');
      expect(ids(weekly)).toEqual(await oracle(`e.status = 'ACTIVE' and s.frequency = 'weekly'`, 'e.created_at desc, e.id desc', 100));
    });

    it('slug and id take repeated or comma-separated slugs, tickers and ids', async () => {
      expect(await fxList('slug=fx1,FX2')).toEqual(fxIds('FX1', 'FX2'));
      expect(await fxList('slug=fx1&slug=fx3')).toEqual(fxIds('FX1', 'FX3'));
      expect(await fxList(`id=${fx.FX1},FX3`)).toEqual(fxIds('FX1', 'FX3'));
      expect(await fxList(`id=${fx.FX2}&id=${fx.FX3}`)).toEqual(fxIds('FX2', 'FX3'));
      expect(await fxList('id=abc')).toEqual([]);
      expect(await fxList('id=99999999999999999999999')).toEqual([]);
      expect(await fxList('slug=fx1&id=FX2')).toEqual([]);
    });

    it('tag_id takes ids or slugs, tag_slug slugs; both must hold; unknown tags match nothing', async () => {
      for (const q of [`tag_id=${tag['fx-alpha']}`, 'tag_id=fx-alpha', 'tagId=fx-alpha', 'tag_slug=fx-alpha', 'tagSlug=fx-alpha']) {
        expect(await fxList(q), q).toEqual(fxIds('FX1', 'FX3'));
      }
      expect(await fxList('tag_slug=fx-alpha,fx-beta')).toEqual(fxIds('FX1', 'FX2', 'FX3'));
      expect(await fxList(`tag_slug=${tag['fx-alpha']}`)).toEqual([]);
      expect(await fxList('tag_id=fx-alpha&tag_slug=fx-solo')).toEqual(fxIds('FX3'));
      expect(await fxList('tag_id=fx-nope')).toEqual([]);
      expect(await fxList('tag_id=fx-nope,fx-beta')).toEqual(fxIds('FX2'));
      expect(ids(await get('/events?active=false&closed=true&tag_id=fx-alpha&order=id&ascending=true'))).toEqual(fxIds('FX4'));
    });

    it('exclude_tag_id / excludeTagId leave out events carrying the tags; unknown tags are ignored', async () => {
      expect(await fxList(`${FX_ALL}&exclude_tag_id=fx-alpha`)).toEqual(fxIds('FX2'));
      expect(await fxList(`${FX_ALL}&excludeTagId=${tag['fx-beta']},fx-solo`)).toEqual(fxIds('FX1'));
      expect(await fxList(`${FX_ALL}&exclude_tag_id=fx-nope`)).toEqual(fxIds('FX1', 'FX2', 'FX3'));
    });

    it('related_tags / relatedTags expand the include tags to tags co-occurring on the same markets', async () => {
      expect(await fxList('tag_slug=fx-related')).toEqual([]);
      expect(await fxList('tag_slug=fx-related&related_tags=true')).toEqual(fxIds('FX1', 'FX3'));
      expect(await fxList('tag_id=fx-related&relatedTags=true')).toEqual(fxIds('FX1', 'FX3'));
      expect(await fxList('tag_slug=fx-related&related_tags=false')).toEqual([]);
    });

    it('liquidity bounds, all their spellings, compared exactly', async () => {
      for (const name of ['liquidity_min', 'liquidityMin', 'liquidity_num_min', 'liquidityNumMin']) {
        expect(await fxList(`${FX_ALL}&${name}=50.25`), name).toEqual(fxIds('FX1', 'FX3'));
      }
      for (const name of ['liquidity_max', 'liquidityMax', 'liquidity_num_max', 'liquidityNumMax']) {
        expect(await fxList(`${FX_ALL}&${name}=50.25`), name).toEqual(fxIds('FX1', 'FX2'));
      }
      expect(await fxList(`${FX_ALL}&liquidity_min=50.250000000000000000001`)).toEqual(fxIds('FX3'));
      expect(await fxList(`${FX_ALL}&liquidity_min=999999.99999999&liquidity_max=999999.99999999`)).toEqual(fxIds('FX3'));
      expect(await fxList(`${FX_ALL}&liquidity_min=0&liquidityMin=100`)).toEqual(fxIds('FX1', 'FX2', 'FX3'));
      expect(await fxList(`${FX_ALL}&liquidity_min=5.025e1`)).toEqual(fxIds('FX1', 'FX3'));
    });

    it('volume bounds, all their spellings, compared exactly', async () => {
      for (const name of ['volume_min', 'volumeMin', 'volume_num_min', 'volumeNumMin']) {
        expect(await fxList(`${FX_ALL}&${name}=100.5`), name).toEqual(fxIds('FX1', 'FX2'));
      }
      for (const name of ['volume_max', 'volumeMax', 'volume_num_max', 'volumeNumMax']) {
        expect(await fxList(`${FX_ALL}&${name}=0.00000001`), name).toEqual(fxIds('FX3'));
      }
      expect(await fxList(`${FX_ALL}&volume_max=0.000000009`)).toEqual([]);
      expect(await fxList(`${FX_ALL}&volume_min=100.5&volume_max=200`)).toEqual(fxIds('FX1', 'FX2'));
      for (const bad of ['abc', '1,5', 'NaN', 'Infinity', '1e5000', '0x10', '']) {
        await get(`/events?volume_min=${encodeURIComponent(bad)}`, 400);
      }
    });

    it('start and end date bounds take RFC 3339, YYYY-MM-DD HH:mm:ss and YYYY-MM-DD, inclusively', async () => {
      expect(await fxList(`${FX_ALL}&start_date_min=2098-01-01 12:00:00`)).toEqual(fxIds('FX2'));
      expect(await fxList(`${FX_ALL}&startDateMin=2098-01-01T13:00:00%2B02:00`)).toEqual(fxIds('FX2'));
      expect(await fxList(`${FX_ALL}&start_date_min=2098-01-01T12:00:00.001Z`)).toEqual([]);
      expect(await fxList(`${FX_ALL}&start_date_max=2020-06-01`)).toEqual(fxIds('FX1'));
      expect(await fxList(`${FX_ALL}&startDateMax=2020-05-31T23:59:59.999Z`)).toEqual([]);
      expect(await fxList(`${FX_ALL}&end_date_max=2021-03-02`)).toEqual(fxIds('FX3'));
      expect(await fxList(`${FX_ALL}&endDateMax=2021-03-01T23:59:59-00:01`)).toEqual(fxIds('FX3'));
      expect(await fxList(`${FX_ALL}&end_date_min=2098-06-01&endDateMin=2000-01-01`)).toEqual(fxIds('FX1', 'FX2'));
      expect(await fxList(`${FX_ALL}&endDateMin=2098-06-01T00:00:00z`)).toEqual(fxIds('FX1', 'FX2'));
      expect(await fxList(`${FX_ALL}&start_date_min=2028-02-29`)).toEqual(fxIds('FX2'));
      for (const bad of ['2026-13-01', '2026-02-29', '2026-04-31', 'tomorrow', '2026-1-1', '2026-11-22T25:00:00Z', '2026-11-22T10:00Z', '0000-01-01', '2026-11-22T10:00:00+24:00', '22/11/2026', '2026-11-22 10:00']) {
        const error = await get(`/events?start_date_min=${encodeURIComponent(bad)}`, 400);
        expect(error.error.details[0].path).toBe('start_date_min');
      }
      await get('/events?endDateMax=2026-02-30', 400);
    });
  });
});

describe('GET /events/keyset', () => {
  async function walk(query: string): Promise<string[]> {
    const out: string[] = [];
    let cursor: string | null = null;
    for (let pages = 0; pages < 1000; pages += 1) {
      const body: { events: Array<{ id: string }>; next_cursor: string | null } = await get(`/events/keyset?${query}${cursor ? `&after_cursor=${cursor}` : ''}`);
      out.push(...ids(body.events));
      if (body.next_cursor === null) return out;
      cursor = body.next_cursor;
    }
    throw new Error('no end');
  }

  it('pages ACTIVE events by id ascending by default, in the keyset field set, without duplicates or gaps', async () => {
    const first = await get('/events/keyset');
    expect(first.events).toHaveLength(20);
    expect(typeof first.next_cursor).toBe('string');
    for (const event of first.events) expect(sorted(Object.keys(event))).toEqual(sorted(KEYSET_FIELDS));
    expect(await get('/api/compat/events/keyset')).toEqual(first);
    const all = await walk('limit=500');
    expect(all).toEqual(await oracle(`e.status = 'ACTIVE'`, 'e.id asc'));
    expect(new Set(all).size).toBe(all.length);
  });

  it('presents every keyset field', async () => {
    const { events, next_cursor } = await get('/events/keyset?slug=fx1');
    expect(next_cursor).toBeNull();
    expect(events).toEqual([{
      id: fx.FX1, ticker: 'FX1', slug: 'fx1', title: 'Fixture alpha 100%', description: 'About FX1',
      startDate: '2020-06-01T00:00:00.000+00:00', endDate: '2099-01-01T00:00:00.000+00:00',
      createdAt: '2019-01-01T00:00:01.000+00:00', updatedAt: '2019-01-01T00:00:01.000+00:00',
      active: true, closed: false, enableOrderBook: true, negRisk: true, seriesSlug: 'fxs1',
    }]);
  });

  const KEYSET_ORDER: Record<string, string> = {
    id: 'e.id', slug: 'e.slug', title: 'e.title', createdAt: 'e.created_at', updatedAt: 'e.updated_at', endDate: 'e.strike_date', volume: 'e.volume', liquidity: 'e.liquidity',
  };
  it.each(Object.keys(KEYSET_ORDER))('walks order=%s both ways to the end (ascending by default)', async (key) => {
    for (const ascending of [undefined, true, false]) {
      const dir = ascending === false ? 'desc' : 'asc';
      const walked = await walk(`recurrence=weekly&order=${key}&limit=250${ascending === undefined ? '' : `&ascending=${ascending}`}`);
      expect(walked).toEqual(await oracle(`e.status = 'ACTIVE' and s.frequency = 'weekly'`, `${KEYSET_ORDER[key]} ${dir}, e.id ${dir}`));
      expect(walked.length).toBeGreaterThan(500);
    }
  });

  it('applies ascending to the default id order; refuses unknown order keys', async () => {
    const { events } = await get('/events/keyset?ascending=false&limit=5');
    expect(ids(events)).toEqual(await oracle(`e.status = 'ACTIVE'`, 'e.id desc', 5));
    const error = await get('/events/keyset?order=ticker', 400);
    expect(error.error.message).toBe('order must be one of: id, slug, title, createdAt, updatedAt, endDate, volume, liquidity');
  });

  it('serves a page 20,000 rows deep as fast as the first one (true keyset)', async () => {
    let cursor = '';
    for (let page = 0; page < 40; page += 1) cursor = (await get(`/events/keyset?limit=500${cursor ? `&after_cursor=${cursor}` : ''}`)).next_cursor;
    const deep = await get(`/events/keyset?limit=20&after_cursor=${cursor}`);
    expect(ids(deep.events)).toEqual(await oracle(`e.status = 'ACTIVE'`, 'e.id asc', 20, 20_000));
    const median = async (path: string) => {
      const times: number[] = [];
      for (let i = 0; i < 9; i += 1) {
        const start = performance.now();
        await get(path);
        times.push(performance.now() - start);
      }
      return times.sort((a, b) => a - b)[4]!;
    };
    const firstId = await median('/events/keyset?limit=20');
    const firstVolume = await median('/events/keyset?limit=20&order=volume');
    const deepVolumeCursor = encodeCursor('compat-events:volume:asc', [(await api.db.raw(`select volume::text as v, id from events where status = 'ACTIVE' order by volume, id offset 20000 limit 1`)).rows[0].v, 0]);
    const deepTime = await median(`/events/keyset?limit=20&after_cursor=${cursor}`);
    const deepVolume = await median(`/events/keyset?limit=20&order=volume&after_cursor=${deepVolumeCursor}`);
    expect(deepTime).toBeLessThan(firstId * 3 + 25);
    expect(deepVolume).toBeLessThan(firstVolume * 3 + 25);
  });

  it('refuses tampered, foreign and other-ordering cursors with 400', async () => {
    const { next_cursor } = await get('/events/keyset?limit=2');
    const { next_cursor: volumeCursor } = await get('/events/keyset?limit=2&order=volume');
    const bad = [
      'garbage!',
      `${next_cursor.slice(0, 10)}${next_cursor[10] === 'A' ? 'B' : 'A'}${next_cursor.slice(11)}`,
      next_cursor.slice(0, -2),
      encodeCursor('compat-events:id:asc', ['1']),
      encodeCursor('compat-events:id:asc', [1, 2]),
      encodeCursor('compat-events:volume:asc', ["1' or 1=1 --", 5]),
      encodeCursor('compat-events:volume:asc', ['1e999999', 5]),
      encodeCursor('compat-events:created_at:asc', ['2026-13-45T00:00:00Z', 5]),
      encodeCursor('accounts', [1]),
      'a'.repeat(5000),
    ];
    for (const cursor of bad) {
      const error = await get(`/events/keyset?after_cursor=${encodeURIComponent(cursor)}`, 400);
      expect(cursor).not.toBe(next_cursor);
      expect(error.error.code).toBe('invalid_request');
    }
    await get(`/events/keyset?after_cursor=${next_cursor}&ascending=false`, 400);
    await get(`/events/keyset?after_cursor=${next_cursor}&order=volume`, 400);
    await get(`/events/keyset?after_cursor=${volumeCursor}`, 400);
    expect((await get(`/events/keyset?after_cursor=${volumeCursor}&order=volume`)).events).toHaveLength(20);
    expect((await get('/events/keyset?after_cursor=')).events).toHaveLength(20);
  });

  it('rejects offset with 422, whatever its value, on both paths', async () => {
    for (const path of ['/events/keyset', '/api/compat/events/keyset']) {
      for (const value of ['0', '20', 'abc', '']) {
        const error = await get(`${path}?offset=${value}`, 422);
        expect(error.error.code).toBe('unprocessable');
      }
    }
  });

  it('clamps limit to 500', async () => {
    expect((await get('/events/keyset?limit=100000')).events).toHaveLength(500);
    await get('/events/keyset?limit=0', 400);
  });

  it('closed, live, series_id, title_search, event_date and start_time bounds', async () => {
    const list = async (query: string) => ids((await get(`/events/keyset?${query}&limit=500`)).events);
    expect(await list(FX_ALL)).toEqual(fxIds('FX1', 'FX2', 'FX3'));
    expect(await list(`${FX_ALL}&closed=true`)).toEqual(fxIds('FX4', 'FX5'));
    expect(await list(`${FX_ALL}&live=true`)).toEqual(fxIds('FX1'));
    expect(await list(`${FX_ALL}&live=false`)).toEqual(fxIds('FX2', 'FX3'));
    expect(await list(`${FX_ALL}&live=true&closed=true`)).toEqual([]);
    await expectAsOracle(() => list('live=true'), `e.status = 'ACTIVE' and e.start_date <= now() and now() < e.strike_date`, 'e.id', 500);
    expect(await list(`series_id=${fxs1}`)).toEqual(fxIds('FX1', 'FX2'));
    expect(await list(`series_id=99999999,${fxs1}`)).toEqual(fxIds('FX1', 'FX2'));
    expect(await list('series_id=99999999')).toEqual([]);
    expect(await list('series_id=abc')).toEqual([]);
    expect(await list('title_search=ALPHA 100%25')).toEqual(fxIds('FX1'));
    expect(await list('title_search=fixture')).toEqual(fxIds('FX1', 'FX2', 'FX3'));
    expect(await list('title_search=fx2')).toEqual(fxIds('FX2'));
    expect(await list('title_search=fixture_')).toEqual([]);
    expect(await list('title_search=%25')).toEqual(fxIds('FX1'));
    expect(await list(`event_date=2098-01-01&${FX_ALL}`)).toEqual(fxIds('FX2'));
    expect(await list(`event_date=2021-03-01&${FX_ALL}`)).toEqual(fxIds('FX3'));
    const day = await list('event_date=2026-11-22');
    expect(day).toEqual(await oracle(`e.status = 'ACTIVE' and (e.start_date at time zone 'UTC')::date = '2026-11-22'`, 'e.id', 500));
    for (const bad of ['2026-02-30', '2098-01-01T00:00:00Z', 'today']) await get(`/events/keyset?event_date=${bad}`, 400);
    expect(await list(`${FX_ALL}&start_time_min=2021-03-01T10:00:00Z`)).toEqual(fxIds('FX2', 'FX3'));
    expect(await list(`${FX_ALL}&start_time_max=2021-03-01 10:00:00`)).toEqual(fxIds('FX1', 'FX3'));
    await get('/events/keyset?start_time_min=yesterday', 400);
    expect(await list(`${FX_ALL}&tag_slug=fx-alpha&volume_min=1`)).toEqual(fxIds('FX1'));
  });

  it('returns an empty page for game_id, event_week, created_by, parent_event_id; accepts the compatibility flags', async () => {
    for (const q of ['game_id=1', 'event_week=47', 'created_by=alice', 'parent_event_id=1']) {
      expect(await get(`/events/keyset?${q}`)).toEqual({ events: [], next_cursor: null });
    }
    await get('/events/keyset?event_week=abc', 400);
    const base = await get('/events/keyset?limit=30');
    expect(await get('/events/keyset?limit=30&featured_order=true&include_children=true&include_best_lines=false&partner_slug=x&tag_match=all&locale=fr')).toEqual(base);
  });
});

describe('GET /events/pagination', () => {
  it('pages with hasMore and totalResults counted within the filters, capped at the scan window', async () => {
    const first = await get('/events/pagination');
    expect(first.data).toHaveLength(20);
    expect(first.pagination).toEqual({ hasMore: true, totalResults: 10_000 });
    expect(ids(first.data)).toEqual(ids(await get('/events')));
    expect(sorted(Object.keys(first.data[0]))).toEqual(sorted(['id', 'ticker', 'slug', 'title', 'active', 'closed', 'ended']));
    expect(await get('/api/compat/events/pagination')).toEqual(first);

    expect(await get('/events/pagination?series_ticker=FXS1&order=id&ascending=true')).toEqual({
      data: [
        { id: fx.FX1, ticker: 'FX1', slug: 'fx1', title: 'Fixture alpha 100%', active: true, closed: false, ended: false },
        { id: fx.FX2, ticker: 'FX2', slug: 'fx2', title: 'Fixture beta', active: true, closed: false, ended: false },
      ],
      pagination: { hasMore: false, totalResults: 2 },
    });
    expect((await get('/events/pagination?series_ticker=FXS1&limit=1')).pagination).toEqual({ hasMore: true, totalResults: 2 });
    expect((await get('/events/pagination?series_ticker=FXS1&limit=1&offset=1')).pagination).toEqual({ hasMore: false, totalResults: 2 });
    expect(await get('/events/pagination?series_ticker=FXS1&offset=5')).toEqual({ data: [], pagination: { hasMore: false, totalResults: 2 } });
    expect((await get('/events/pagination?seriesTicker=FXS2&active=false&closed=true')).pagination).toEqual({ hasMore: false, totalResults: 2 });
    expect(await get('/events/pagination?featured=true')).toEqual({ data: [], pagination: { hasMore: false, totalResults: 0 } });
    expect(await get('/events/pagination?tag_id=fx-nope')).toEqual({ data: [], pagination: { hasMore: false, totalResults: 0 } });
    expect((await get('/events/pagination?limit=500')).data).toHaveLength(100);

    const edge = await get('/events/pagination?offset=9990&limit=50');
    expect(edge.data).toHaveLength(10);
    expect(edge.pagination).toEqual({ hasMore: false, totalResults: 10_000 });
    const weekly = Number((await api.db.raw(`select count(*) as n from events e join series s on s.id = e.series_id where e.status = 'ACTIVE' and s.frequency = 'weekly'`)).rows[0].n);
    expect((await get('/events/pagination?recurrence=weekly')).pagination).toEqual({ hasMore: true, totalResults: weekly });
  });
});

describe('GET /events/results', () => {
  it('lists RESOLVED or ended events with closedTime, newest first', async () => {
    const body = await get(`/events/results?${FX_ALL}`);
    expect(body).toEqual([
      { id: fx.FX5, ticker: 'FX5', slug: 'fx5', title: 'Fixture epsilon', active: false, closed: true, ended: true, closedTime: '2021-05-03T00:00:00.000+00:00' },
      { id: fx.FX4, ticker: 'FX4', slug: 'fx4', title: 'Fixture delta', active: false, closed: true, ended: true, closedTime: '2021-04-02T00:00:00.000+00:00' },
      { id: fx.FX3, ticker: 'FX3', slug: 'fx3', title: 'Fixture gamma', active: true, closed: false, ended: true, closedTime: '2021-03-02T00:00:00.000+00:00' },
    ]);
    expect(await get(`/api/compat/events/results?${FX_ALL}`)).toEqual(body);
    await expectAsOracle(async () => ids(await get('/events/results?limit=100')), `(e.status <> 'ACTIVE' or e.strike_date <= now())`, 'e.created_at desc, e.id desc', 100);
  });

  it('orders (closing time: not closed last ascending), pages, clamps and filters', async () => {
    expect(ids(await get(`/events/results?${FX_ALL}&order=closed_time&ascending=true`))).toEqual(fxIds('FX4', 'FX5', 'FX3'));
    expect(ids(await get(`/events/results?${FX_ALL}&order=closed_time`))).toEqual(fxIds('FX3', 'FX5', 'FX4'));
    expect(ids(await get(`/events/results?${FX_ALL}&order=volume,id&ascending=true`))).toEqual(fxIds('FX5', 'FX3', 'FX4'));
    await get('/events/results?order=nope', 400);
    expect(await get('/events/results?limit=1000')).toHaveLength(100);
    expect(await get('/events/results?offset=10000')).toEqual([]);
    await expectAsOracle(async () => ids(await get('/events/results?offset=9995&order=id&ascending=true')), `(e.status <> 'ACTIVE' or e.strike_date <= now())`, 'e.id', 5, 9995);
    expect(ids(await get('/events/results?series_ticker=FXS2&order=id&ascending=true'))).toEqual(fxIds('FX3', 'FX4', 'FX5'));
    expect(ids(await get('/events/results?seriesTicker=FXS1'))).toEqual([]);
    expect(ids(await get(`/events/results?id=FX4,${fx.FX5}&order=id&ascending=true`))).toEqual(fxIds('FX4', 'FX5'));
    expect(ids(await get('/events/results?tag_id=fx-alpha&order=id&ascending=true'))).toEqual(fxIds('FX3', 'FX4'));
    expect(ids(await get('/events/results?tagId=fx-gamma'))).toEqual(fxIds('FX5'));
    expect(ids(await get('/events/results?tag_slug=fx-beta'))).toEqual(fxIds('FX4'));
    expect(ids(await get('/events/results?tagSlug=fx-solo'))).toEqual(fxIds('FX3'));
    expect(ids(await get(`/events/results?${FX_ALL}&exclude_tag_id=fx-alpha`))).toEqual(fxIds('FX5'));
    expect(ids(await get(`/events/results?${FX_ALL}&excludeTagId=fx-gamma&order=id&ascending=true`))).toEqual(fxIds('FX3', 'FX4'));
    expect(ids(await get('/events/results?tag_slug=fx-related&related_tags=true&order=id&ascending=true'))).toEqual(fxIds('FX3', 'FX4'));
    expect(ids(await get('/events/results?tag_slug=fx-related&relatedTags=true&order=id&ascending=true'))).toEqual(fxIds('FX3', 'FX4'));
    // parameters outside the documented subset are ignored
    expect(ids(await get(`/events/results?${FX_ALL}&volume_min=1000&closed=false`))).toEqual(fxIds('FX5', 'FX4', 'FX3'));
  });
});

describe('single event reads', () => {
  it('GET /events/{id} by id or ticker, with its series and analytics', async () => {
    const body = await get(`/events/${fx.FX1}`);
    expect(body).toEqual({
      id: fx.FX1, ticker: 'FX1', slug: 'fx1', title: 'Fixture alpha 100%', description: 'About FX1',
      startDate: '2020-06-01T00:00:00.000+00:00', creationDate: '2019-01-01T00:00:01.000+00:00', endDate: '2099-01-01T00:00:00.000+00:00',
      startTime: '2020-06-01T00:00:00.000+00:00', createdAt: '2019-01-01T00:00:01.000+00:00', updatedAt: '2019-01-01T00:00:01.000+00:00',
      active: true, closed: false, archived: false, commentsEnabled: true, enableOrderBook: true, negRisk: true, enableNegRisk: true,
      eventDate: '2020-06-01', seriesSlug: 'fxs1', live: true, ended: false,
      liquidity: '50.25', volume: '100.5', openInterest: '10', liquidityClob: '50.25',
      series: [{ id: fxs1, ticker: 'FXS1', slug: 'fxs1', title: 'Fixture series one', active: true, closed: false, archived: false }],
      analytics: {
        marketCount: 2, activeCount: 2, closedCount: 0, resolvedCount: 0, unresolvedCount: 2, resolvedYesCount: 0, resolvedNoCount: 0, invalidCount: 0,
        totalVolume: '100.5', totalLiquidity: '50.25', yesPriceSum: '0.95', avgYesPrice: '0.475', minYesPrice: '0.33', maxYesPrice: '0.62',
      },
    });
    expect(await get('/events/FX1')).toEqual(body);
    expect((await get(`/events/${fx.FX5}`)).analytics).toEqual({
      marketCount: 3, activeCount: 0, closedCount: 0, resolvedCount: 3, unresolvedCount: 0, resolvedYesCount: 1, resolvedNoCount: 1, invalidCount: 1,
      totalVolume: '0', totalLiquidity: '0', yesPriceSum: '0', avgYesPrice: '0', minYesPrice: '0', maxYesPrice: '0',
    });
    expect((await get('/events/FX2')).analytics).toMatchObject({ marketCount: 0, totalVolume: '0', avgYesPrice: '0' });
    expect((await get('/events/FX4')).analytics).toMatchObject({ marketCount: 1, closedCount: 1, unresolvedCount: 1, totalVolume: '300' });
  });

  it('GET /events/slug/{slug} by slug or ticker', async () => {
    const body = await get('/events/slug/fx3');
    expect(body).toEqual({
      id: fx.FX3, ticker: 'FX3', slug: 'fx3', title: 'Fixture gamma', description: 'About FX3',
      active: true, closed: false, commentsEnabled: true, enableOrderBook: true, negRisk: false, seriesSlug: 'fxs2', live: false, ended: true,
      liquidity: '999999.99999999', volume: '0.00000001', openInterest: '1',
      analytics: {
        marketCount: 0, activeCount: 0, closedCount: 0, resolvedCount: 0, unresolvedCount: 0, resolvedYesCount: 0, resolvedNoCount: 0, invalidCount: 0,
        totalVolume: '0', totalLiquidity: '0', yesPriceSum: '0', avgYesPrice: '0', minYesPrice: '0', maxYesPrice: '0',
      },
    });
    expect(await get('/events/slug/FX3')).toEqual(body);
    await get(`/events/slug/${fx.FX3}`, 404);
  });

  it('answers 404 for unknown ids, slugs and malformed values, never 500', async () => {
    for (const id of ['99999999', '99999999999999999999999', 'NOPE', "1' or 1=1 --", '%00', '-1', 'fx9', 'KXTREASURYYI0']) {
      const path = encodeURIComponent(id);
      for (const suffix of ['', '/tags', '/tweet-count', '/comments/count']) {
        const error = await get(`/events/${path}${suffix}`, 404);
        expect(error.error.code).toBe('not_found');
      }
      await get(`/events/slug/${path}`, 404);
      await get(`/api/compat/events/${path}/tweet-count`, 404);
      await get(`/api/compat/events/${path}/comments/count`, 404);
    }
    await get(`/events/${'A'.repeat(10_000)}`, 400);
  });

  it('routes the literal paths before /events/{id}', async () => {
    expect(Object.keys(await get('/events/keyset?limit=1'))).toEqual(['events', 'next_cursor']);
    expect(Object.keys(await get('/events/pagination?limit=1'))).toEqual(['data', 'pagination']);
    expect(Object.keys((await get('/events/results?limit=1'))[0])).toContain('closedTime');
    expect(Object.keys((await get('/events/creators?limit=1'))[0])).toContain('creatorHandle');
    expect((await get('/events/creators/tags', 404)).error.message).toBe("no event creator 'tags'");
  });

  it('GET /events/{id}/tags: the compatibility tags of the event with their ACTIVE event counts', async () => {
    const tags = await get('/events/FX4/tags');
    expect(tags.map((t: { slug: string }) => t.slug)).toEqual(['fx-alpha', 'fx-beta']);
    expect(tags[0]).toMatchObject({ id: tag['fx-alpha'], label: 'FX-ALPHA', activeEventsCount: 2, createdBy: 0, forceShow: false, isCarousel: false });
    expect(tags[0].createdAt).toMatch(/\+00:00$/);
    expect(tags[1].activeEventsCount).toBe(1);
    expect(await get(`/events/${fx.FX2}/tags`)).toHaveLength(1);
  });

  it('tweet-count is 0 and comments/count counts the visible comments, on both paths', async () => {
    for (const prefix of ['', '/api/compat']) {
      expect(await get(`${prefix}/events/FX1/tweet-count`)).toEqual({ tweetCount: 0 });
      expect(await get(`${prefix}/events/${fx.FX1}/comments/count`)).toEqual({ count: 3 });
      expect(await get(`${prefix}/events/FX2/comments/count`)).toEqual({ count: 0 });
    }
    const expected = (await api.db.raw(`select count(*)::int as n from comments c join markets m on m.id = c.market_id join events e on e.id = m.event_id where e.ticker = 'KXTREASURYYI0-1' and not c.hidden`)).rows[0].n;
    expect(await get('/events/KXTREASURYYI0-1/comments/count')).toEqual({ count: expected });
  });
});

describe('event creators', () => {
  it('lists the accounts that created events, in the EventCreator shape, updatedAt descending by default; alias too', async () => {
    const body = await get('/events/creators');
    expect(body).toEqual([
      { id: users.alice!.id, creatorName: 'Alice Maker', creatorHandle: 'alice', creatorUrl: '/profile/alice', creatorImage: 'https://img.example/alice.png', createdAt: '2024-01-01T00:00:00.000+00:00', updatedAt: '2024-06-01T00:00:00.000+00:00' },
      { id: users.bob!.id, creatorName: 'Bob Trader', creatorHandle: 'bobby', creatorUrl: '/profile/bobby', creatorImage: null, createdAt: '2024-02-01T00:00:00.000+00:00', updatedAt: '2024-05-01T00:00:00.000+00:00' },
      { id: users.dave!.id, creatorName: 'dave_x', creatorHandle: 'dave_x', creatorUrl: '/profile/dave_x', creatorImage: null, createdAt: '2024-03-01T00:00:00.000+00:00', updatedAt: '2024-04-01T00:00:00.000+00:00' },
    ]);
    expect(await get('/api/compat/events/creators')).toEqual(body);
  });

  it('orders by every key both ways', async () => {
    const names = async (q: string) => (await get(`/events/creators?${q}`)).map((c: { creatorHandle: string }) => c.creatorHandle);
    expect(await names('order=updatedAt&ascending=true')).toEqual(['dave_x', 'bobby', 'alice']);
    expect(await names('order=createdAt')).toEqual(['dave_x', 'bobby', 'alice']);
    expect(await names('order=createdAt&ascending=true')).toEqual(['alice', 'bobby', 'dave_x']);
    expect(await names('order=creatorHandle&ascending=true')).toEqual(['alice', 'bobby', 'dave_x']);
    expect(await names('order=creatorHandle')).toEqual(['dave_x', 'bobby', 'alice']);
    expect(await names('order=creatorName&ascending=true')).toEqual(['dave_x', 'alice', 'bobby']);
    expect(await names('order=creatorName,id')).toEqual(['bobby', 'alice', 'dave_x']);
    const byId = [users.alice!.id, users.bob!.id, users.dave!.id].sort();
    expect(ids(await get('/events/creators?order=id&ascending=true'))).toEqual(byId);
    expect(ids(await get('/events/creators?order=id'))).toEqual([...byId].reverse());
    expect((await get('/events/creators?order=name', 400)).error.message).toBe('order must be one of: id, creatorName, creatorHandle, createdAt, updatedAt');
  });

  it('filters by name and handle (case-insensitive substrings, every spelling), pages and clamps', async () => {
    const handles = async (q: string) => (await get(`/events/creators?${q}`)).map((c: { creatorHandle: string }) => c.creatorHandle);
    expect(await handles('creatorName=MAKER')).toEqual(['alice']);
    expect(await handles('creator_name=trad')).toEqual(['bobby']);
    expect(await handles('creatorHandle=BOB')).toEqual(['bobby']);
    expect(await handles('creator_handle=a')).toEqual(['alice', 'dave_x']);
    expect(await handles('creator_handle=%25')).toEqual([]);
    expect(await handles('creator_handle=_')).toEqual(['dave_x']);
    expect(await handles('creatorName=carol')).toEqual([]);
    expect(await handles('limit=1&offset=1')).toEqual(['bobby']);
    expect(await handles('offset=10000')).toEqual([]);
    expect(await get('/events/creators?limit=1000')).toHaveLength(3);
    await get('/events/creators?limit=0', 400);
    await get('/events/creators?offset=-5', 400);
  });

  it('GET /events/creators/{id}: one creator; 404 for non-creators and non-UUIDs', async () => {
    for (const prefix of ['', '/api/compat']) {
      expect(await get(`${prefix}/events/creators/${users.bob!.id}`)).toMatchObject({ id: users.bob!.id, creatorHandle: 'bobby' });
      expect(await get(`${prefix}/events/creators/${users.bob!.id.toUpperCase()}`)).toMatchObject({ id: users.bob!.id });
      await get(`${prefix}/events/creators/${users.carol!.id}`, 404);
      for (const bad of ['abc', '1', "x' or 1=1 --", '00000000-0000-0000-0000-000000000000']) await get(`${prefix}/events/creators/${encodeURIComponent(bad)}`, 404);
    }
  });
});

describe('malformed input is 400 or an empty answer, never 500', () => {
  const STRING_PARAMS: Record<string, string[]> = {
    '/events': ['series_ticker', 'seriesTicker', 'recurrence', 'slug', 'id', 'tag_id', 'tagId', 'tag_slug', 'tagSlug', 'exclude_tag_id', 'excludeTagId', 'liquidity_min', 'liquidityNumMax', 'volume_num_min', 'volumeMax', 'start_date_min', 'endDateMax', 'order'],
    '/events/keyset': ['series_ticker', 'slug', 'id', 'tag_id', 'tag_slug', 'exclude_tag_id', 'liquidityMin', 'volume_min', 'startDateMax', 'end_date_min', 'order', 'after_cursor', 'series_id', 'game_id', 'title_search', 'event_date', 'created_by', 'partner_slug', 'tag_match', 'locale', 'start_time_min', 'start_time_max'],
    '/events/pagination': ['series_ticker', 'recurrence', 'slug', 'id', 'tag_id', 'tag_slug', 'exclude_tag_id', 'liquidity_max', 'volume_min', 'start_date_max', 'end_date_min', 'order'],
    '/events/results': ['series_ticker', 'seriesTicker', 'slug', 'id', 'tag_id', 'tagSlug', 'exclude_tag_id', 'excludeTagId', 'order'],
    '/events/creators': ['creatorName', 'creator_name', 'creatorHandle', 'creator_handle', 'order'],
  };
  it.each(Object.keys(STRING_PARAMS))('%s', async (path) => {
    for (const name of STRING_PARAMS[path]!) {
      for (const value of ["' or 1=1 --", 'x'.repeat(10_000), ',,,', '\\', '%', 'é中'.repeat(20), `a,${'b,'.repeat(600)}`]) {
        const response = await api.get(`${path}?${name}=${encodeURIComponent(value)}`);
        expect([200, 400], `${path} ${name}=${value.slice(0, 20)}: ${response.status}`).toContain(response.status);
        if (response.status === 200 && value.startsWith("'")) {
          const rows = Array.isArray(response.body) ? response.body : (response.body.events ?? response.body.data);
          if (!['order'].includes(name)) expect(rows.length, `${path} ${name}`).toBeLessThanOrEqual(20);
        }
      }
    }
    for (const bool of ['related_tags', 'active', 'closed', 'live', 'ascending']) {
      const response = await api.get(`${path}?${bool}=yes`);
      expect([200, 400]).toContain(response.status);
    }
  });
});

import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { generateCatalogue } from '../../src/db/seed/generator.js';
import { encodeCursor } from '../../src/domain/pagination/cursor.js';
import { TestService, type ApiResponse } from '../support/service.js';

/**
 * Cursor pagination of the catalogue: full walks of every cursor list (native
 * /api/events, /api/series, /api/markets in cursor mode, /events/keyset with every order key) while other
 * rows are being inserted, and cursors that are tampered with, forged, or taken from another list.
 *
 * A walk is correct when it returns every row that existed before it started, no row twice, and the rows
 * in the list's order (rows inserted during the walk may or may not appear, depending on where they land
 * relative to the cursor; those that appear must be in order too).
 */

let api: TestService;
let categoryId = '';
let seriesIds: string[] = [];

beforeAll(async () => {
  api = await TestService.start();
  await generateCatalogue(api.db, { events: 720, eventsPerSeries: 12, marketsPerEvent: 2, creatorIds: [], now: new Date() });
  categoryId = String((await api.db('categories').first('id')).id);
  seriesIds = (await api.db('series').select('id').orderBy('id')).map((r: { id: string }) => String(r.id));
});
afterAll(() => api?.stop());

interface Walk {
  /** The first page's path (with its limit and filters). */
  path: string;
  items: string;
  cursorField: 'cursor' | 'next_cursor';
  cursorParam: 'cursor' | 'after_cursor';
  table: 'events' | 'series' | 'markets';
  /** SQL over `t`: the rows the list holds, and their order. */
  where: string;
  order: string;
}

const native = (path: string, table: Walk['table'], where = 'true'): Walk => ({
  path, items: table, cursorField: 'cursor', cursorParam: 'cursor', table, where, order: 't.created_at desc, t.id desc',
});

/** Keyset order keys and their columns. */
const KEYSET_COLUMNS: Record<string, string> = {
  id: 'id', slug: 'slug', title: 'title', createdAt: 'created_at', updatedAt: 'updated_at', endDate: 'strike_date', volume: 'volume', liquidity: 'liquidity',
};
const keyset = (order: string, ascending: boolean, closed = false): Walk => {
  const direction = ascending ? 'asc' : 'desc';
  const column = KEYSET_COLUMNS[order]!;
  return {
    path: `/events/keyset?limit=29&order=${order}&ascending=${ascending}${closed ? '&closed=true' : ''}`,
    items: 'events', cursorField: 'next_cursor', cursorParam: 'after_cursor', table: 'events',
    where: closed ? `t.status <> 'ACTIVE'` : `t.status = 'ACTIVE'`,
    order: column === 'id' ? `t.id ${direction}` : `t.${column} ${direction}, t.id ${direction}`,
  };
};

const WALKS: Walk[] = [
  native('/api/events?limit=37', 'events'),
  native('/api/events?limit=13&status=ACTIVE&with_nested_markets=true', 'events', `t.status = 'ACTIVE'`),
  native('/api/series?limit=7', 'series'),
  native('/api/markets?cursor=&limit=61', 'markets'),
  native('/api/markets?status=CLOSED&cursor=&limit=17', 'markets', `t.status = 'CLOSED'`),
  { ...keyset('id', true), path: '/events/keyset?limit=29' },
  ...Object.keys(KEYSET_COLUMNS).map((order, i) => keyset(order, i % 2 === 1)),
  keyset('endDate', true, true),
  keyset('title', false, true),
];

/** Follows the cursor from the first page to the last; returns the ids in the order served. */
async function walk(w: Walk): Promise<string[]> {
  const ids: string[] = [];
  let cursor: string | null = null;
  const limit = Number(/limit=(\d+)/.exec(w.path)![1]);
  for (let pages = 0; pages < 500; pages += 1) {
    const response: ApiResponse = await api.get(cursor === null ? w.path : `${w.path.replace('cursor=&', '')}&${w.cursorParam}=${encodeURIComponent(cursor)}`);
    expect(response.status, `${w.path}: ${JSON.stringify(response.body).slice(0, 200)}`).toBe(200);
    const items = response.body[w.items] as Array<{ id: string }>;
    expect(items.length).toBeLessThanOrEqual(limit);
    ids.push(...items.map((item) => item.id));
    cursor = response.body[w.cursorField];
    if (cursor === null) return ids;
    expect(items.length, 'a page before the last is full').toBe(limit);
  }
  throw new Error(`${w.path}: no last page`);
}

const idsWhere = async (w: Walk): Promise<string[]> => (await api.db.raw(`select t.id::text as id from ${w.table} t where ${w.where}`)).rows.map((r: { id: string }) => r.id);
const inOrder = async (w: Walk, ids: string[]) =>
  (await api.db.raw(`select t.id::text as id from ${w.table} t where t.id = any(?::bigint[]) order by ${w.order}`, [ids])).rows.map((r: { id: string }) => r.id);

let inserted = 0;
const pick = <T>(items: T[]) => items[Math.floor(Math.random() * items.length)]!;

/**
 * Inserts series, events (ACTIVE and CLOSED) and markets until stopped, with keys that land everywhere in
 * every order: creation times now or anywhere in the past, random titles, volumes, liquidity, strike times.
 */
function startInserting(): { stop: () => Promise<number> } {
  let running = true;
  const past = () => new Date(Date.now() - Math.floor(Math.random() * 400 * 86_400_000));
  const loop = (async () => {
    let rounds = 0;
    while (running) {
      const n = (inserted += 1);
      const stamp = n % 2 === 0 ? past() : undefined;
      const times = stamp ? { created_at: stamp, updated_at: stamp } : {};
      const [series] = await api.db('series').insert({ ticker: `CCS${n}`, slug: `ccs${n}`, title: `Concurrent ${n}`, category_id: categoryId, frequency: 'weekly', ...times }).returning('id');
      const events = await api.db('events')
        .insert(['ACTIVE', 'CLOSED'].map((status, i) => ({
          ticker: `CCE${n}-${i}`, slug: `cce${n}-${i}`, series_id: n % 3 === 0 ? series.id : pick(seriesIds), status,
          title: `${pick(['Alpha', 'Fed rate', 'Zulu', 'Bitcoin price', 'Mid'])} ${Math.random().toString(36).slice(2, 6)}`,
          start_date: past(), strike_date: new Date(Date.now() + Math.floor(Math.random() * 400) * 86_400_000),
          volume: (Math.random() * 5000).toFixed(2), liquidity: (Math.random() * 2000).toFixed(2), ...times,
        })))
        .returning('id');
      await api.db('markets').insert(events.map((e: { id: string }, i: number) => ({ ticker: `CCE${n}-${i}-M`, event_id: e.id, title: `Concurrent market ${n}`, status: i === 0 ? 'ACTIVE' : 'CLOSED', ...times })));
      rounds += 1;
      await new Promise((resolve) => setTimeout(resolve, 1));
    }
    return rounds;
  })();
  return {
    stop: async () => {
      running = false;
      return loop;
    },
  };
}

describe('full cursor walks while rows are being inserted', () => {
  it.each(WALKS.map((w) => [w.path, w] as const))('%s', async (_, w) => {
    const before = await idsWhere(w);
    expect(before.length).toBeGreaterThan(40);
    const inserter = startInserting();
    let served: string[];
    try {
      served = await walk(w);
    } finally {
      expect(await inserter.stop()).toBeGreaterThan(0);
    }
    expect(new Set(served).size, 'no row twice').toBe(served.length);
    const missing = before.filter((id) => !served.includes(id));
    expect(missing, 'every row that existed before the walk').toEqual([]);
    expect(served, 'in the order of the list').toEqual(await inOrder(w, served));
    // rows that do not belong to the list never appear
    expect((await api.db.raw(`select t.id from ${w.table} t where t.id = any(?::bigint[]) and not (${w.where})`, [served])).rows).toEqual([]);
  });

  it('walks an ordering by long non-ASCII titles (300 characters, the longest the service accepts)', async () => {
    const series = seriesIds[0]!;
    // 300 code points each: 3- and 4-byte UTF-8, and characters JSON escapes (a control character takes 6 bytes)
    const titles = ['中', '😀', 'é', '"', '\\', '\u0001'].flatMap((ch) => Array.from({ length: 3 }, (_, i) => `${String.fromCharCode(65 + i)}${ch.repeat(299)}`));
    expect(titles.every((t) => Array.from(t).length === 300)).toBe(true);
    await api.db('events').insert(titles.map((title, i) => ({
      ticker: `LONG-${i}`, slug: `long-${i}`, series_id: series, title, start_date: new Date('2020-01-01T00:00:00Z'), strike_date: new Date('2099-01-01T00:00:00Z'),
    })));
    try {
      for (const ascending of [true, false]) {
        const w: Walk = { ...keyset('title', ascending), path: `/events/keyset?limit=3&order=title&ascending=${ascending}&series_id=${series}` };
        const served = await walk(w);
        expect(served).toEqual(await inOrder(w, await idsWhere({ ...w, where: `t.status = 'ACTIVE' and t.series_id = ${series}` })));
        expect(served.length).toBeGreaterThan(titles.length);
      }
      // the database holds no longer title (and no longer slug) than the service accepts (migration 0007)
      const tooLong = { ticker: 'LONG-X', series_id: series, start_date: new Date(), strike_date: new Date() };
      await expect(api.db('events').insert({ ...tooLong, slug: 'long-x', title: 'x'.repeat(301) })).rejects.toThrow(/events_title_length/);
      await expect(api.db('events').insert({ ...tooLong, slug: 'x'.repeat(101), title: 'x' })).rejects.toThrow(/events_slug_length/);
    } finally {
      await api.db('events').where('ticker', 'like', 'LONG-%').delete();
    }
  });
});

describe('cursors that are not the previous page\'s', () => {
  /** Every cursor list, with the first cursor it hands out. */
  const LISTS: Array<{ path: string; param: string; cursor?: string }> = [
    { path: '/api/events?limit=2', param: 'cursor' },
    { path: '/api/series?limit=2', param: 'cursor' },
    { path: '/api/markets?cursor=&limit=2', param: 'cursor' },
    ...Object.keys(KEYSET_COLUMNS).flatMap((order) => [true, false].map((ascending) => ({ path: `/events/keyset?limit=2&order=${order}&ascending=${ascending}`, param: 'after_cursor' }))),
  ];

  beforeAll(async () => {
    for (const list of LISTS) {
      const body = (await api.get(list.path)).body;
      list.cursor = body.cursor ?? body.next_cursor;
      expect(typeof list.cursor, list.path).toBe('string');
    }
  });

  const withCursor = (list: (typeof LISTS)[number], cursor: string) => `${list.path.replace('cursor=&', '')}&${list.param}=${encodeURIComponent(cursor)}`;

  it('refuses every other list\'s cursor (and another ordering\'s) with 400', async () => {
    for (const list of LISTS) {
      expect((await api.get(withCursor(list, list.cursor!))).status, `${list.path} own cursor`).toBe(200);
      for (const other of LISTS.filter((o) => o !== list)) {
        const response = await api.get(withCursor(list, other.cursor!));
        expect(response.status, `${list.path} given the cursor of ${other.path}`).toBe(400);
        expect(response.body.error.code).toBe('invalid_request');
      }
    }
  });

  /** Cursors the service never hands out: tampered bytes, other versions, keys of the wrong shape or impossible values. */
  const raw = (value: unknown) => Buffer.from(JSON.stringify(value)).toString('base64url');
  function forgeries(list: (typeof LISTS)[number]): Array<[string, string]> {
    const cursor = list.cursor!;
    const { c: collection, k: key } = JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8')) as { c: string; k: Array<string | number> };
    const text = typeof key[0] === 'string';
    const replaceFirst = (value: unknown) => raw({ v: 1, c: collection, k: [value, ...key.slice(1)] });
    return [
      ['a flipped character', `${cursor.slice(0, 12)}${cursor[12] === 'A' ? 'B' : 'A'}${cursor.slice(13)}`],
      ['a truncated cursor', cursor.slice(0, -3)],
      ['an extended cursor', `${cursor}AAAA`],
      ['standard base64 padding', `${cursor}==`],
      ['another version', raw({ v: 2, c: collection, k: key })],
      ['no key', raw({ v: 1, c: collection })],
      ['JSON null', raw(null)],
      ['a key too long', raw({ v: 1, c: collection, k: [...key, 1] })],
      ['a key too short', raw({ v: 1, c: collection, k: key.slice(0, -1) })],
      ['SQL as a key', replaceFirst("1' or 1=1 --")],
      ['NUL in a key', replaceFirst(text ? `${key[0]}\u0000` : '\u0000')],
      ['a number as text', replaceFirst(text ? 12 : '12')],
      ['an impossible day', replaceFirst('2026-02-30T00:00:00.000000Z')],
      ['year zero', replaceFirst('0000-01-01T00:00:00.000000Z')],
      ['a fractional id', raw({ v: 1, c: collection, k: [...key.slice(0, -1), 1.5] })],
      ['an id past 2^53', raw({ v: 1, c: collection, k: [...key.slice(0, -1), 2 ** 63] })],
      ['a huge number', replaceFirst('1e999999')],
      ['a 5,000-character cursor', 'A'.repeat(5_000)],
      ['NUL', '\u0000'],
      ['spaces', '   '],
    ];
  }

  it.each(LISTS.map((l) => [l.path, l] as const))('%s refuses forged cursors with 400', async (_, list) => {
    for (const [what, cursor] of forgeries(list)) {
      const response = await api.get(withCursor(list, cursor));
      // in an ordering by slug or title any text (without NUL) is a position: such a forgery is served normally
      if (response.status === 200) {
        expect(list.path, `${list.path}: ${what} served`).toMatch(/order=(slug|title)/);
        const forged = JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8')).k[0];
        expect(typeof forged === 'string' && !forged.includes('\u0000'), `${list.path}: ${what} served`).toBe(true);
        continue;
      }
      expect(response.status, `${list.path}: ${what}`).toBe(400);
      expect(response.body.error.code, `${list.path}: ${what}`).toBe('invalid_request');
    }
  });

  it('starts at the first page on an empty cursor', async () => {
    for (const list of LISTS) {
      const first = await api.get(list.path);
      expect((await api.get(withCursor(list, ''))).body, list.path).toEqual(first.body);
    }
  });

  it('keeps an old cursor valid after the rows around it change (opaque position, not an offset)', async () => {
    const first = await api.get('/api/events?limit=5');
    const next = await api.get(`/api/events?limit=5&cursor=${first.body.cursor}`);
    await api.db('events').whereIn('id', first.body.events.map((e: { id: string }) => e.id)).update({ title: 'Renamed' });
    expect((await api.get(`/api/events?limit=5&cursor=${first.body.cursor}`)).body.events.map((e: { id: string }) => e.id)).toEqual(next.body.events.map((e: { id: string }) => e.id));
    // a keyset cursor whose row was deleted still points between its neighbours
    const page = await api.get('/events/keyset?limit=4&order=volume');
    const after = await api.get(`/events/keyset?limit=4&order=volume&after_cursor=${page.body.next_cursor}`);
    const last = page.body.events[3].id;
    await api.db('markets').where('event_id', last).delete();
    await api.db('event_tags').where('event_id', last).delete();
    await api.db('events').where('id', last).delete();
    expect((await api.get(`/events/keyset?limit=4&order=volume&after_cursor=${page.body.next_cursor}`)).body).toEqual(after.body);
  });

  it('encodes the sort value exactly: a cursor built on a tie continues past every row of the tie', async () => {
    // many events share one volume: a page boundary inside the tie must not skip or repeat any of them
    const ids = (await api.db('events').select('id').where('status', 'ACTIVE').orderBy('id').limit(40)).map((r: { id: string }) => String(r.id));
    await api.db('events').whereIn('id', ids).update({ volume: '123.45678901' });
    const served: string[] = [];
    let cursor: string | null = encodeCursor('compat-events:volume:asc', ['123.45678900', 0]);
    do {
      const body: { events: Array<{ id: string }>; next_cursor: string | null } = (await api.get(`/events/keyset?limit=7&order=volume&volume_min=123.456789&volume_max=123.4567891&after_cursor=${cursor}`)).body;
      served.push(...body.events.map((e) => e.id));
      cursor = body.next_cursor;
    } while (cursor !== null);
    expect(served).toEqual(ids);
  });
});

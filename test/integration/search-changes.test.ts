import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createDb, type Db } from '../../src/db/knex.js';
import {
  pruneSearchChanges,
  readSearchCatalogue,
  readSearchChanges,
  readSearchItems,
  type SearchItemRecord,
} from '../../src/db/repositories/search-index.js';
import type { SearchKind } from '../../src/db/tables.js';
import { createTestDatabase } from '../support/service.js';

/**
 * search_changes (migration 0023) and its repository (src/db/repositories/search-index.ts): every write of a
 * searchable item, made here with Knex directly as any writer would, is returned by the first change read
 * after it commits, and by that one only; writes of other columns are not.
 */

let url: string;
let db: Db;
/** The snapshot of the last read, as a process keeps it. */
let snapshot: string;

beforeAll(async () => {
  url = await createTestDatabase();
  db = createDb(url, 3);
});
afterAll(async () => {
  await db?.destroy();
});

type Change = { kind: SearchKind; id: string };
const order = (changes: Change[]) => [...changes].sort((a, b) => `${a.kind}:${a.id}`.localeCompare(`${b.kind}:${b.id}`));

/** The changes since the last read (which this one replaces). */
async function changes(): Promise<Change[]> {
  const read = await readSearchChanges(db, snapshot);
  snapshot = read.snapshot;
  return order(read.changed);
}

const ids = { category: '', series: '', series2: '', event: '', event2: '', market: '', tag: '', tag2: '', user: '' };
const id = (rows: Array<{ id: unknown }>) => String(rows[0]!.id);

async function insertEvent(ticker: string, seriesId: string): Promise<string> {
  return id(
    await db('events')
      .insert({ ticker, slug: ticker.toLowerCase(), series_id: seriesId, title: `Event ${ticker}`, start_date: new Date('2024-01-01'), strike_date: new Date('2099-01-01') })
      .returning('id'),
  );
}

async function item(kind: SearchKind, itemId: string): Promise<SearchItemRecord | undefined> {
  const rows = await readSearchItems(db, [{ kind, id: itemId }]);
  expect(rows.length).toBeLessThanOrEqual(1);
  return rows[0];
}

describe('search changes', () => {
  it('after a full read, a change read shows nothing', async () => {
    const catalogue = await readSearchCatalogue(db);
    expect(catalogue.snapshot).toMatch(/^\d+:\d+:/);
    snapshot = catalogue.snapshot;
    expect(await changes()).toEqual([]);
    expect(await changes()).toEqual([]);
  });

  it('returns inserted items of every kind once, in the read after they commit', async () => {
    ids.category = id(await db('categories').insert({ slug: 'sc-cat', name: 'Category' }).returning('id'));
    expect(await changes()).toEqual([]);
    ids.series = id(await db('series').insert({ ticker: 'SCS', slug: 'scs', title: 'Weather Series', category_id: ids.category, frequency: 'Weekly' }).returning('id'));
    ids.series2 = id(await db('series').insert({ ticker: 'SCT', slug: 'sct', title: 'Other series', category_id: ids.category, frequency: 'daily' }).returning('id'));
    ids.tag = id(await db('tags').insert({ slug: 'sc-red', label: 'Red Things' }).returning('id'));
    ids.tag2 = id(await db('tags').insert({ slug: 'sc-blue', label: 'Blue' }).returning('id'));
    ids.user = id(await db('users').insert({ email: 'sc@example.com', username: 'SearchUser', name: '', password_hash: 'x' }).returning('id'));
    ids.event = await insertEvent('SCS-1', ids.series);
    ids.event2 = await insertEvent('SCS-2', ids.series);
    await db('event_tags').insert([
      { event_id: ids.event, tag_id: ids.tag },
      { event_id: ids.event, tag_id: ids.tag2 },
    ]);
    ids.market = id(await db('markets').insert({ ticker: 'SCS-1-M', event_id: ids.event, title: 'Will it rain?' }).returning('id'));
    expect(await changes()).toEqual(
      order([
        { kind: 'series', id: ids.series },
        { kind: 'series', id: ids.series2 },
        { kind: 'tag', id: ids.tag },
        { kind: 'tag', id: ids.tag2 },
        { kind: 'profile', id: ids.user },
        { kind: 'event', id: ids.event },
        { kind: 'event', id: ids.event2 },
        { kind: 'market', id: ids.market },
      ]),
    );
    expect(await changes()).toEqual([]);
  });

  it('the full read holds the same items as readSearchItems', async () => {
    const catalogue = await readSearchCatalogue(db);
    const all = [
      { kind: 'series', id: ids.series },
      { kind: 'event', id: ids.event },
      { kind: 'market', id: ids.market },
      { kind: 'tag', id: ids.tag },
      { kind: 'profile', id: ids.user },
    ] as const;
    const current = await readSearchItems(db, all);
    expect(current).toHaveLength(5);
    for (const row of current) expect(catalogue.items).toContainEqual(row);
    expect(catalogue.items.filter((i) => i.kind === 'event').map((i) => i.id).sort()).toEqual([ids.event, ids.event2].sort());
    // A change read from the full read's snapshot: nothing since.
    expect((await readSearchChanges(db, catalogue.snapshot)).changed).toEqual([]);
  });

  it('reads the current rows with their documented fields', async () => {
    const lowTag = Number(ids.tag) < Number(ids.tag2) ? [ids.tag, ids.tag2] : [ids.tag2, ids.tag];
    expect(await item('series', ids.series)).toEqual({
      kind: 'series', id: ids.series, text: 'weather series | scs | scs',
      exactLower: ['weather series', 'scs'], exactUpper: ['SCS'], status: null, seriesId: null, tagIds: [], frequency: 'weekly',
    });
    expect(await item('event', ids.event)).toEqual({
      kind: 'event', id: ids.event, text: 'event scs 1 | scs 1 | scs 1 | weather series | scs | scs',
      exactLower: ['event scs-1', 'scs-1'], exactUpper: ['SCS-1'], status: 'ACTIVE', seriesId: ids.series, tagIds: lowTag, frequency: null,
    });
    expect((await item('event', ids.event2))?.tagIds).toEqual([]);
    expect(await item('market', ids.market)).toEqual({
      kind: 'market', id: ids.market, text: 'will it rain | scs 1 m | event scs 1 | scs 1 | scs 1 | weather series | scs | scs',
      exactLower: ['will it rain?'], exactUpper: ['SCS-1-M'], status: 'ACTIVE', seriesId: null, tagIds: [], frequency: null,
    });
    expect(await item('tag', ids.tag)).toEqual({
      kind: 'tag', id: ids.tag, text: 'red things | sc red',
      exactLower: ['sc-red', 'red things'], exactUpper: [], status: null, seriesId: null, tagIds: [], frequency: null,
    });
    // An empty name is no value to compare with.
    expect(await item('profile', ids.user)).toEqual({
      kind: 'profile', id: ids.user, text: 'searchuser',
      exactLower: ['searchuser'], exactUpper: [], status: null, seriesId: null, tagIds: [], frequency: null,
    });
    // Several kinds and ids at once; an id that does not exist is left out.
    const rows = await readSearchItems(db, [
      { kind: 'tag', id: ids.tag2 },
      { kind: 'event', id: ids.event2 },
      { kind: 'event', id: ids.event },
      { kind: 'market', id: '999999999' },
    ]);
    expect(rows.map((r) => `${r.kind}:${r.id}`).sort()).toEqual([`event:${ids.event}`, `event:${ids.event2}`, `tag:${ids.tag2}`].sort());
  });

  it('returns updated items once: their text, status and the other columns the index holds', async () => {
    await db('markets').where({ id: ids.market }).update({ title: 'Will it snow?' });
    expect(await changes()).toEqual([{ kind: 'market', id: ids.market }]);
    expect(await changes()).toEqual([]);

    await db('markets').where({ id: ids.market }).update({ status: 'CLOSED', closed_at: new Date() });
    expect(await changes()).toEqual([{ kind: 'market', id: ids.market }]);
    await db('events').where({ id: ids.event2 }).update({ status: 'CLOSED' });
    expect(await changes()).toEqual([{ kind: 'event', id: ids.event2 }]);
    expect((await item('event', ids.event2))?.status).toBe('CLOSED');

    await db('tags').where({ id: ids.tag }).update({ label: 'Crimson things' });
    expect(await changes()).toEqual([{ kind: 'tag', id: ids.tag }]);
    await db('users').where({ id: ids.user }).update({ name: 'Searching Person' });
    expect(await changes()).toEqual([{ kind: 'profile', id: ids.user }]);
    expect((await item('profile', ids.user))?.exactLower).toEqual(['searchuser', 'searching person']);
    await db('series').where({ id: ids.series2 }).update({ frequency: 'Monthly' });
    expect(await changes()).toEqual([{ kind: 'series', id: ids.series2 }]);
    expect((await item('series', ids.series2))?.frequency).toBe('monthly');

    // A series' new text is carried to its events, and theirs to their markets: all of them changed.
    await db('series').where({ id: ids.series }).update({ title: 'Climate series' });
    expect(await changes()).toEqual(
      order([
        { kind: 'series', id: ids.series },
        { kind: 'event', id: ids.event },
        { kind: 'event', id: ids.event2 },
        { kind: 'market', id: ids.market },
      ]),
    );
    expect((await item('market', ids.market))?.text).toContain('climate series');
    // An event moved to another series.
    await db('events').where({ id: ids.event2 }).update({ series_id: ids.series2 });
    expect(await changes()).toEqual([{ kind: 'event', id: ids.event2 }]);
    expect((await item('event', ids.event2))?.seriesId).toBe(ids.series2);
    expect(await changes()).toEqual([]);
  });

  it('does not return updates of other columns, or updates that change nothing', async () => {
    await db('markets').where({ id: ids.market }).update({ volume: '123.5', liquidity: '7', open_interest: '3', last_yes_price: '0.4', last_no_price: '0.6' });
    await db('events').where({ id: ids.event }).update({ volume: '123.5', liquidity: '7', open_interest: '3' });
    await db('events').where({ id: ids.event }).update({ description: 'Longer words', updated_at: new Date() });
    await db('series').where({ id: ids.series }).update({ description: 'About climate' });
    await db('tags').where({ id: ids.tag }).update({ force_show: true });
    await db('users').where({ id: ids.user }).update({ avatar_url: 'https://example.com/a.png' });
    // The same values written again.
    await db('markets').where({ id: ids.market }).update({ title: 'Will it snow?', status: 'CLOSED' });
    await db('events').where({ id: ids.event }).update({ title: 'Event SCS-1', search_text: '' });
    await db('event_tags').where({ event_id: ids.event, tag_id: ids.tag }).update({ tag_id: ids.tag });
    expect(await changes()).toEqual([]);
  });

  it("returns an event when its tags change, and both events when a link moves", async () => {
    await db('event_tags').insert({ event_id: ids.event2, tag_id: ids.tag });
    expect(await changes()).toEqual([{ kind: 'event', id: ids.event2 }]);
    expect((await item('event', ids.event2))?.tagIds).toEqual([ids.tag]);
    await db('event_tags').where({ event_id: ids.event2, tag_id: ids.tag }).delete();
    expect(await changes()).toEqual([{ kind: 'event', id: ids.event2 }]);
    expect((await item('event', ids.event2))?.tagIds).toEqual([]);
    await db('event_tags').where({ event_id: ids.event, tag_id: ids.tag2 }).update({ event_id: ids.event2 });
    expect(await changes()).toEqual(order([{ kind: 'event', id: ids.event }, { kind: 'event', id: ids.event2 }]));
    expect((await item('event', ids.event))?.tagIds).toEqual([ids.tag]);
    expect((await item('event', ids.event2))?.tagIds).toEqual([ids.tag2]);
    expect(await changes()).toEqual([]);
  });

  it('returns a change whose transaction began before the last snapshot and committed after it', async () => {
    const other = new pg.Client({ connectionString: url });
    await other.connect();
    try {
      await other.query('begin');
      const early = String((await other.query(`insert into tags (slug, label) values ('sc-early', 'Early') returning id`)).rows[0].id);
      // A later transaction, committed at once: a higher transaction id, seen first.
      const late = id(await db('tags').insert({ slug: 'sc-late', label: 'Late' }).returning('id'));
      expect(await changes()).toEqual([{ kind: 'tag', id: late }]);
      expect(await changes()).toEqual([]);
      await other.query('commit');
      expect(await changes()).toEqual([{ kind: 'tag', id: early }]);
      expect(await changes()).toEqual([]);
      await db('tags').whereIn('id', [early, late]).delete();
      expect(await changes()).toEqual(order([{ kind: 'tag', id: early }, { kind: 'tag', id: late }]));
    } finally {
      await other.end();
    }
  });

  it('returns a rolled back write never, and a write made in a savepoint once its transaction commits', async () => {
    await db.transaction(async (tx) => {
      await tx('tags').where({ id: ids.tag2 }).update({ label: 'Navy' });
      await tx.transaction(async (inner) => inner('tags').where({ id: ids.tag }).update({ label: 'Scarlet' }));
      expect(await changes()).toEqual([]);
    });
    expect(await changes()).toEqual(order([{ kind: 'tag', id: ids.tag }, { kind: 'tag', id: ids.tag2 }]));
    await db
      .transaction(async (tx) => {
        await tx('tags').where({ id: ids.tag2 }).update({ label: 'Azure' });
        throw new Error('rolled back');
      })
      .catch(() => {});
    expect(await changes()).toEqual([]);
  });

  it('returns deleted items once, and readSearchItems leaves them out', async () => {
    // An account without a username is no longer searchable.
    await db('users').where({ id: ids.user }).update({ username: '' });
    expect(await changes()).toEqual([{ kind: 'profile', id: ids.user }]);
    expect(await item('profile', ids.user)).toBeUndefined();

    await db('markets').where({ id: ids.market }).delete();
    expect(await changes()).toEqual([{ kind: 'market', id: ids.market }]);
    expect(await item('market', ids.market)).toBeUndefined();

    // Deleting a tag deletes its links: the events linked to it changed too.
    await db('tags').where({ id: ids.tag }).delete();
    expect(await changes()).toEqual(order([{ kind: 'tag', id: ids.tag }, { kind: 'event', id: ids.event }]));
    expect(await item('tag', ids.tag)).toBeUndefined();
    expect((await item('event', ids.event))?.tagIds).toEqual([]);

    await db('event_tags').where({ event_id: ids.event2 }).delete();
    await db('events').where({ id: ids.event2 }).delete();
    expect(await changes()).toEqual([{ kind: 'event', id: ids.event2 }]);
    await db('series').where({ id: ids.series2 }).delete();
    await db('users').where({ id: ids.user }).delete();
    expect(await changes()).toEqual(order([{ kind: 'series', id: ids.series2 }, { kind: 'profile', id: ids.user }]));
    expect(await readSearchItems(db, [{ kind: 'event', id: ids.event2 }, { kind: 'series', id: ids.series2 }, { kind: 'profile', id: ids.user }])).toEqual([]);
    expect(await changes()).toEqual([]);
  });

  it('replaces the SQL word search: its vectors, dictionary and their functions are gone', async () => {
    const { rows } = await db.raw<{ rows: Array<{ name: string }> }>(`
      select attrelid::regclass::text || '.' || attname as name from pg_attribute where attname = 'search_vector' and not attisdropped
      union all select relname::text from pg_class where relname like 'search_dictionary%' or relname like '%_search_vector'
      union all select proname::text from pg_proc where proname like 'search_dictionary%'
      union all select tgname::text from pg_trigger where tgname like '%search_dictionary%'`);
    expect(rows).toEqual([]);
  });

  it('prunes the rows older than the retention only', async () => {
    const count = async () => Number((await db('search_changes').count<Array<{ count: string }>>('* as count'))[0]!.count);
    await db('search_changes').insert([
      { kind: 'tag', id: 'pruned-1', at: db.raw(`now() - interval '2 hours'`) },
      { kind: 'tag', id: 'pruned-2', at: db.raw(`now() - interval '61 minutes'`) },
      { kind: 'tag', id: 'kept-3', at: db.raw(`now() - interval '59 minutes'`) },
    ]);
    const before = await count();
    expect(await pruneSearchChanges(db, 3600)).toBe(2);
    expect(await count()).toBe(before - 2);
    expect(await db('search_changes').where('at', '<', db.raw(`now() - interval '1 hour'`)).count<Array<{ count: string }>>('* as count')).toEqual([{ count: '0' }]);
    expect(await db('search_changes').whereIn('id', ['pruned-1', 'pruned-2', 'kept-3']).pluck('id')).toEqual(['kept-3']);
    expect(await pruneSearchChanges(db, 3600)).toBe(0);
  });
});

import { createHash, randomBytes } from 'node:crypto';
import pg from 'pg';
import { afterAll, describe, expect, inject, it } from 'vitest';
import { createDb, type Db } from '../../src/db/knex.js';
import { migrateLatest, rollbackAll, rollbackTo } from '../../src/db/migrate.js';
import { migrations } from '../../src/db/migrations/index.js';
import { sqlFunctions } from '../../src/db/sql-functions.js';

const { serverUrl } = inject('testDatabase');
const opened: Db[] = [];

async function emptyDatabase(): Promise<string> {
  const name = `dots_migrate_${randomBytes(5).toString('hex')}`;
  const admin = new pg.Client({ connectionString: serverUrl });
  await admin.connect();
  await admin.query(`create database ${name}`);
  await admin.end();
  const url = new URL(serverUrl);
  url.pathname = `/${name}`;
  return url.toString();
}

function open(url: string): Db {
  const db = createDb(url, 3);
  opened.push(db);
  return db;
}

afterAll(async () => {
  for (const db of opened) await db.destroy();
});

describe('migrations', () => {
  it('apply once when several instances start together', async () => {
    const url = await emptyDatabase();
    const results = await Promise.all([migrateLatest(open(url)), migrateLatest(open(url)), migrateLatest(open(url))]);
    expect(results.flat().sort()).toEqual(migrations.map((m) => m.name).sort());
    expect(await migrateLatest(open(url))).toEqual([]);
  });

  it('roll back completely and apply again', async () => {
    const db = open(await emptyDatabase());
    await migrateLatest(db);
    await rollbackAll(db);
    const tables = await db.raw("select count(*)::int as n from information_schema.tables where table_schema = 'public' and table_name not like 'knex_%'");
    expect(tables.rows[0].n).toBe(0);
    expect(await migrateLatest(db)).toEqual(migrations.map((m) => m.name));
  });

  it('store feed records uncompressed, given to feed_append_records as one JSON array; undone, the previous function and storage return', async () => {
    const db = open(await emptyDatabase());
    await migrateLatest(db);
    const state = async () => ({
      storage: (await db.raw("select attstorage from pg_attribute where attrelid = 'feed_events'::regclass and attname = 'events'")).rows[0].attstorage,
      signatures: (await db.raw("select pg_get_function_identity_arguments(oid) as args from pg_proc where proname = 'feed_append_records'")).rows.map(
        (r: { args: string }) => r.args,
      ),
    });
    const current = { storage: 'e', signatures: ['p_market_ids bigint[], p_events json, p_accounts text[]'] };
    expect(await state()).toEqual(current);
    // 0026 (and any later migration), then 0025, undone.
    await rollbackTo(db, '0025_feed_events_as_one_document');
    expect((await state()).storage).toBe('x');
    await rollbackTo(db, '0024_event_status_counts');
    expect(await state()).toEqual({ storage: 'x', signatures: ['p_market_ids bigint[], p_events text[], p_accounts text[]'] });
    // Applied again: the old function dropped, the current one made again from its file.
    const undone = migrations.slice(migrations.findIndex((m) => m.name === '0024_event_status_counts') + 1).map((m) => m.name);
    expect(await migrateLatest(db)).toEqual(undone);
    expect(undone.slice(0, 2)).toEqual(['0025_feed_events_as_one_document', '0026_feed_events_uncompressed']);
    expect(await state()).toEqual(current);
  });

  it('give markets their order-book identifiers from their id and ticker: existing ones when migrated, new ones whatever is sent', async () => {
    const db = open(await emptyDatabase());
    await migrateLatest(db);
    await rollbackTo(db, '0030_market_candles');
    const [category] = await db('categories').insert({ slug: 'ot', name: 'Outcome tokens' }).returning('id');
    const [series] = await db('series').insert({ ticker: 'OT', slug: 'ot', title: 'Outcome tokens', category_id: category.id, frequency: 'weekly' }).returning('id');
    const [event] = await db('events')
      .insert({ ticker: 'OT-1', slug: 'ot-1', series_id: series.id, title: 'Tokens', start_date: new Date(), strike_date: new Date(Date.now() + 86_400_000) })
      .returning('id');
    await db('markets').insert({ ticker: 'OT-1-A', event_id: event.id, title: 'Before' });
    await migrateLatest(db);
    const derived = (id: string, ticker: string) => {
      const condition = createHash('sha256').update(`dots-exchange/condition/${id}/${ticker}`).digest();
      const token = (outcome: string) => BigInt(`0x${createHash('sha256').update(Buffer.concat([condition, Buffer.from(outcome)])).digest('hex')}`).toString();
      return { id, condition_id: `0x${condition.toString('hex')}`, yes_token_id: token('YES'), no_token_id: token('NO') };
    };
    const columns = ['id', 'condition_id', 'yes_token_id', 'no_token_id'];
    const before = await db('markets').where({ ticker: 'OT-1-A' }).first(columns);
    expect(before).toEqual(derived(String(before.id), 'OT-1-A'));
    const [after] = await db('markets').insert({ ticker: 'OT-1-B', event_id: event.id, title: 'After', condition_id: '0x00', yes_token_id: '1', no_token_id: '2' }).returning(columns);
    expect(after).toEqual(derived(String(after.id), 'OT-1-B'));
  });

  it('leave emoji out of the searchable text, the rows that held them written again (children too); undone, they return', async () => {
    const db = open(await emptyDatabase());
    await migrateLatest(db);
    const [category] = await db('categories').insert({ slug: 'em', name: 'Emoji' }).returning('id');
    const [series] = await db('series').insert({ ticker: 'EM', slug: 'em', title: '🚀 Rocket launches', category_id: category.id, frequency: 'weekly' }).returning('id');
    const [event] = await db('events')
      .insert({ ticker: 'EM-1', slug: 'em-1', series_id: series.id, title: 'Launch #1', start_date: new Date(), strike_date: new Date(Date.now() + 86_400_000) })
      .returning('id');
    await db('markets').insert({ ticker: 'EM-1-A', event_id: event.id, title: 'Reaches orbit 🛰️' });
    const texts = async () =>
      Object.fromEntries(
        await Promise.all(['series', 'events', 'markets'].map(async (table) => [table, (await db(table).where('ticker', 'like', 'EM%').first('search_text')).search_text])),
      );
    const current = { series: 'rocket launches | em | em', events: 'launch 1 | em 1 | em 1 | rocket launches | em | em', markets: 'reaches orbit | em 1 a | launch 1 | em 1 | em 1 | rocket launches | em | em' };
    expect(await texts()).toEqual(current);
    await rollbackTo(db, '0026_feed_events_uncompressed');
    expect(await texts()).toEqual({
      series: '🚀 rocket launches | em | em',
      events: 'launch 1 | em 1 | em 1 | 🚀 rocket launches | em | em',
      markets: 'reaches orbit 🛰 | em 1 a | launch 1 | em 1 | em 1 | 🚀 rocket launches | em | em',
    });
    await migrateLatest(db);
    expect(await texts()).toEqual(current);
  });

    it('keep the rows per status of markets and events equal to the tables through inserts, status changes, deletes and truncates', async () => {
    const db = open(await emptyDatabase());
    await migrateLatest(db);
    const perStatus = async (table: string, column = 'n') =>
      Object.fromEntries((await db.raw(`select status, ${column === 'n' ? 'count(*)' : column}::int as n from ${table} ${column === 'n' ? 'group by status' : `where ${column} <> 0`} order by status`)).rows.map((r: { status: string; n: number }) => [r.status, r.n]));
    const expectCounted = async (what: string) => {
      expect(await perStatus('event_status_counts', 'events'), `events ${what}`).toEqual(await perStatus('events'));
      expect(await perStatus('market_status_counts', 'markets'), `markets ${what}`).toEqual(await perStatus('markets'));
    };
    const [category] = await db('categories').insert({ slug: 'sc', name: 'Status counts' }).returning('id');
    const [series] = await db('series').insert({ ticker: 'SC', slug: 'sc', title: 'Status counts', category_id: category.id, frequency: 'daily' }).returning('id');
    await db.raw(
      `insert into events (ticker, slug, series_id, title, status, start_date, strike_date)
       select 'SC-' || g, 'sc-' || g, ?, 'Event ' || g, (array['ACTIVE', 'CLOSED', 'RESOLVED'])[1 + g % 3], now(), now() + interval '1 day' from generate_series(1, 30) g`,
      [series.id],
    );
    await db.raw(
      `insert into markets (ticker, event_id, title, status, result)
       select e.ticker || '-M', e.id, e.title, e.status, case when e.status = 'RESOLVED' then 'yes' end from events e`,
    );
    await expectCounted('after inserts');
    await db('events').whereIn('ticker', ['SC-1', 'SC-2', 'SC-4']).update({ status: 'CLOSED' });
    await db('events').where({ ticker: 'SC-5' }).update({ status: 'ACTIVE', title: 'Retitled' });
    await db('markets').whereIn('ticker', ['SC-4-M', 'SC-8-M']).update({ status: 'RESOLVED', result: 'no' });
    await db('events').where({ ticker: 'SC-7' }).update({ title: 'Title only' });
    await expectCounted('after status changes');
    await db('markets').where('ticker', 'like', 'SC-1%').delete();
    await db('events').where('ticker', 'like', 'SC-1%').delete();
    await expectCounted('after deletes');
    // A transaction that rolls back changes no count.
    await db.transaction(async (tx) => {
      await tx('events').update({ status: 'RESOLVED' });
      throw new Error('rolled back');
    }).catch(() => undefined);
    await expectCounted('after a rollback');
    await db.raw('truncate events cascade');
    await expectCounted('after a truncate');
    expect(await perStatus('event_status_counts', 'events')).toEqual({});
  });

  it('create every SQL function from its file, and again when the file changed since or the function is missing', async () => {
    const db = open(await emptyDatabase());
    await migrateLatest(db);
    const files = sqlFunctions();
    expect(files.length).toBeGreaterThan(20);
    expect(await db('db_functions').orderBy('name').pluck('checksum')).toEqual(files.map((f) => f.checksum));
    const body = async (name: string) => (await db.raw('select prosrc from pg_proc where proname = ?', [name])).rows.map((r: { prosrc: string }) => r.prosrc);

    // A file changed since it was applied (here: the body, and the checksum recorded for an older file).
    await db.raw(`create or replace function feed_append_records(p_market_ids bigint[], p_events json, p_accounts text[]) returns json language sql as $$ select null::json $$`);
    const unchanged = await migrateLatest(db);
    expect(await body('feed_append_records')).toEqual([' select null::json ']);
    await db('db_functions').where({ name: 'feed_append_records' }).update({ checksum: 'older' });
    // A function missing.
    await db.raw('drop function placements_begin(text[], bigint[], json)');
    expect([unchanged, await migrateLatest(db)]).toEqual([[], []]);
    expect((await body('feed_append_records'))[0]).toContain('insert into feed_events');
    expect(await body('placements_begin')).toHaveLength(1);
    expect(await db('db_functions').orderBy('name').pluck('checksum')).toEqual(files.map((f) => f.checksum));
  });
});

import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createDb, type Db } from '../../src/db/knex.js';
import { hasSearchChanges } from '../../src/db/repositories/search-index.js';
import { LiveSearchIndex } from '../../src/domain/catalogue/live-search-index.js';
import { createTestDatabase } from '../support/service.js';

/**
 * Each process's search index (src/domain/catalogue/live-search-index.ts) against one database: what any
 * connection commits is in every process's index at its next search, a search that finds nothing changed
 * reads from the index as it is, and searches arriving together share one update.
 */

let writer: Db;
const processes: Array<{ db: Db; index: LiveSearchIndex; statements: string[] }> = [];
let seriesId = '';

beforeAll(async () => {
  const url = await createTestDatabase();
  writer = createDb(url, 2);
  for (let i = 0; i < 2; i++) {
    const db = createDb(url, 3);
    const statements: string[] = [];
    db.on('query', (query: { sql: string }) => statements.push(query.sql));
    processes.push({ db, index: new LiveSearchIndex(db), statements });
  }
  const [category] = await writer('categories').insert({ slug: 'live-index', name: 'Live index' }).returning('id');
  const [series] = await writer('series')
    .insert({ ticker: 'LIVEIDX', slug: 'live-index', title: 'Live index series', category_id: category.id, frequency: 'weekly' })
    .returning('id');
  seriesId = String(series.id);
});

afterAll(async () => {
  for (const { index, db } of processes) {
    await index.stop();
    await db.destroy();
  }
  await writer?.destroy();
});

const found = async (process: (typeof processes)[number], text: string) => {
  const index = await process.index.current();
  return index.best(index.query(text), 'event', 10).map((c) => c.item.id);
};

async function waitFor(condition: () => Promise<boolean>): Promise<void> {
  for (let tries = 0; !(await condition()); tries++) {
    if (tries > 200) throw new Error('the condition did not hold within 10 s');
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

async function insertEvent(ticker: string, title: string): Promise<string> {
  const [row] = await writer('events')
    .insert({ ticker, slug: ticker.toLowerCase(), series_id: seriesId, title, start_date: new Date('2024-01-01'), strike_date: new Date('2099-01-01') })
    .returning('id');
  return String(row.id);
}

describe('LiveSearchIndex', () => {
  it('has, at each search of every process, what any connection committed before it', async () => {
    expect(await found(processes[0]!, 'zanzibar')).toEqual([]);
    expect(await found(processes[1]!, 'zanzibar')).toEqual([]);
    const id = await insertEvent('LIVEIDX-1', 'Zanzibar rainfall');
    expect(await found(processes[0]!, 'zanzibar')).toEqual([id]);
    expect(await found(processes[1]!, 'zanz')).toEqual([id]);

    await writer('events').where({ id }).update({ title: 'Madagascar rainfall' });
    expect(await found(processes[1]!, 'zanzibar')).toEqual([]);
    expect(await found(processes[1]!, 'madagascar rainfall')).toEqual([id]);
    expect((await processes[0]!.index.current()).get('event', id)?.status).toBe('ACTIVE');
    await writer('events').where({ id }).update({ status: 'CLOSED' });
    expect((await processes[0]!.index.current()).get('event', id)?.status).toBe('CLOSED');

    await writer('events').where({ id }).delete();
    expect(await found(processes[0]!, 'madagascar')).toEqual([]);
    expect((await processes[0]!.index.current()).get('event', id)).toBeUndefined();
  });

  it('makes a search that arrives while an update runs wait for the next one', async () => {
    const { index } = processes[0]!;
    await index.current();
    // An update held open after reading the changes: it has a tag to read, and the tags table is locked.
    await writer('tags').insert({ slug: 'live-index-serengeti', label: 'Serengeti' });
    const lock = await writer.transaction();
    try {
      await lock.raw('lock table tags in access exclusive mode');
      const held = index.current();
      await waitFor(async () => (await writer.raw(`select count(*)::int as n from pg_stat_activity where wait_event_type = 'Lock' and query like '%from tags%'`)).rows[0].n > 0);
      // Committed after that update read the changes: a search asked now must not be answered by it.
      const id = await insertEvent('LIVEIDX-2', 'Kilimanjaro snow');
      const search = found(processes[0]!, 'kilimanjaro');
      await lock.rollback();
      expect(await search).toEqual([id]);
      await held;
    } finally {
      if (!lock.isCompleted()) await lock.rollback();
    }
  });

  it('reads from the index as it is, and again from an updated one when something changed since', async () => {
    const { index, db } = processes[1]!;
    const search = async () => {
      const seen: string[][] = [];
      const value = await index.read(async (words, since) => {
        seen.push(words.best(words.query('tasmania'), 'event', 10).map((c) => c.item.id));
        return { changed: await hasSearchChanges(db, since), value: seen.length };
      });
      return { runs: value, seen };
    };
    await index.current();
    expect(await search()).toEqual({ runs: 1, seen: [[]] });
    const id = await insertEvent('LIVEIDX-3', 'Tasmania wind');
    expect(await search()).toEqual({ runs: 2, seen: [[], [id]] });
    expect(await search()).toEqual({ runs: 1, seen: [[id]] });
  });

  it('serves searches arriving together with one update, not one each', async () => {
    const { index, statements } = processes[1]!;
    await index.current();
    statements.length = 0;
    await Promise.all(Array.from({ length: 20 }, () => index.current()));
    // The update under way when they arrived (if any), and one after it for all of them.
    const reads = statements.filter((sql) => sql.includes('search_changes'));
    expect(reads.length).toBeGreaterThanOrEqual(1);
    expect(reads.length).toBeLessThanOrEqual(2);
  });
});

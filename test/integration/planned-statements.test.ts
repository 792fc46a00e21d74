import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { generateCatalogue } from '../../src/db/seed/generator.js';
import { KEYSET_ORDER_KEYS, LIST_ORDER_KEYS } from '../../src/domain/catalogue/compat-events.js';
import { TestService } from '../support/service.js';

/**
 * The catalogue lists' default pages run as named statements on the pool of generic plans (src/db/pools.ts
 * plannedOnce); filtered pages are planned for their values on the main pool. A statement name stands for
 * one text on a connection: were two texts ever given one name, PostgreSQL would refuse the second.
 */

let api: TestService;

interface Statement {
  pool: 'main' | 'planned';
  sql: string;
  name: string | undefined;
}

let statements: Statement[] = [];

beforeAll(async () => {
  api = await TestService.start();
  await generateCatalogue(api.db, { events: 60, eventsPerSeries: 6, marketsPerEvent: 2, creatorIds: [], now: new Date('2026-11-22T12:00:00Z') });
  const pools = api.service.pools;
  const listen = (pool: Statement['pool']) => (query: { sql: string; options?: { name?: string } }) => {
    statements.push({ pool, sql: query.sql, name: query.options?.name });
  };
  pools.db.on('query', listen('main'));
  pools.plannedDb.on('query', listen('planned'));
});
afterAll(() => api.stop());

/** The statements one request ran. */
async function statementsOf(path: string): Promise<Statement[]> {
  statements = [];
  const response = await api.get(path);
  expect(response.status, `${path}: ${JSON.stringify(response.body).slice(0, 300)}`).toBe(200);
  return statements;
}

/** A read of events or markets (the background sweeps' statements run meanwhile too). */
const isCatalogueRead = (statement: Statement) => /^\s*select/i.test(statement.sql) && /from "(events|markets)"/.test(statement.sql);

/** Every default page: each order key both ways, first and later pages, each status filter. */
function defaultPages(): string[] {
  const paths: string[] = [];
  for (const order of Object.keys(LIST_ORDER_KEYS)) {
    for (const ascending of ['true', 'false']) {
      for (const offset of ['0', '7']) {
        for (const status of ['', '&active=false&closed=true', '&active=false', '&live=true', '&live=false&closed=false']) {
          paths.push(`/events?order=${order}&ascending=${ascending}&offset=${offset}&limit=5${status}`);
          paths.push(`/events/pagination?order=${order}&ascending=${ascending}&offset=${offset}&limit=5${status}`);
        }
      }
    }
  }
  for (const order of Object.keys(KEYSET_ORDER_KEYS)) {
    for (const ascending of ['true', 'false']) {
      for (const status of ['', '&closed=true', '&live=true', '&live=false']) paths.push(`/events/keyset?order=${order}&ascending=${ascending}&limit=5${status}`);
    }
  }
  for (const status of ['', '&status=ACTIVE', '&status=CLOSED', '&status=RESOLVED']) {
    for (const extra of ['', '&with_nested_markets=true&with_analytics=true']) paths.push(`/api/events?limit=5${status}${extra}`);
  }
  return paths;
}

/** Text of each named statement the default pages ran (filled by the first test). */
const textOf = new Map<string, string>();

describe('named statements of the catalogue lists', () => {
  // Every shape of every default page, each page planned and run: minutes when the suite shares the CPU.
  it('run the default pages on the pool of generic plans, one text per name across every shape and page', async () => {
    const check = (path: string, ran: Statement[]) => {
      const reads = ran.filter(isCatalogueRead);
      expect(reads.length, path).toBeGreaterThan(0);
      for (const statement of reads) {
        expect(statement, `${path}: ${statement.sql}`).toMatchObject({ pool: 'planned', name: expect.stringMatching(/^dots_[0-9a-f]{24}$/) });
        const seen = textOf.get(statement.name!);
        if (seen === undefined) textOf.set(statement.name!, statement.sql);
        else expect(statement.sql, `${path}: ${statement.name} names two texts`).toBe(seen);
      }
    };
    for (const path of defaultPages()) {
      check(path, await statementsOf(path));
      // the next page, through its cursor
      const response = await api.get(path);
      const cursor = response.body.next_cursor ?? response.body.cursor;
      if (typeof cursor === 'string') {
        const next = path.startsWith('/api/') ? `${path}&cursor=${encodeURIComponent(cursor)}` : `${path}&after_cursor=${encodeURIComponent(cursor)}`;
        check(next, await statementsOf(next));
      }
    }
    // shapes differ in their text, so they have names of their own
    expect(new Set(textOf.values()).size).toBe(textOf.size);
    expect(textOf.size).toBeGreaterThan(100);
  }, 180_000);

  it('are planned with index scans only, though planned once on tables still small', async () => {
    expect(textOf.size).toBeGreaterThan(100);
    const planned = api.service.pools.plannedDb;
    for (const sql of textOf.values()) {
      const plan = (await planned.raw<{ rows: Array<{ 'QUERY PLAN': string }> }>(`explain (generic_plan) ${sql}`)).rows.map((row) => row['QUERY PLAN']).join('\n');
      expect(plan, sql).not.toMatch(/Seq Scan on (events|markets)\b/);
    }
  });

  it('plan filtered pages for their values on the main pool', async () => {
    const tag = await api.db('tags').first();
    for (const path of [
      `/events?limit=5&tag_slug=${tag.slug}`,
      '/events?limit=5&volume_min=10',
      '/events/keyset?limit=5&title_search=will',
      '/events/pagination?limit=5&series_ticker=NONE',
      '/events?limit=5&start_date_min=2026-01-01',
    ]) {
      const lists = (await statementsOf(path)).filter((s) => isCatalogueRead(s) && /from "events"/.test(s.sql));
      expect(lists.length, path).toBeGreaterThan(0);
      for (const statement of lists) expect(statement, path).toMatchObject({ pool: 'main', name: undefined });
    }
  });

  it('the pool of generic plans plans without values and without sequential scans; the main pool for them, with', async () => {
    const settings = async (db: typeof api.db) =>
      (await db.raw(`select current_setting('plan_cache_mode') as mode, current_setting('enable_seqscan') as seqscan`)).rows[0];
    expect(await settings(api.service.pools.plannedDb)).toEqual({ mode: 'force_generic_plan', seqscan: 'off' });
    expect(await settings(api.db)).toEqual({ mode: 'auto', seqscan: 'on' });
  });
});

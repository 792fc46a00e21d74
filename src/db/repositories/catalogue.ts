import type { Knex } from 'knex';
import type { Queryable } from '../knex.js';
import type { EventsRow, MarketsRow, SeriesRow, TagsRow } from '../tables.js';

/** Base queries of the catalogue's records (a row with a few columns of the rows it refers to); callers add filters, order and limits. */

/** A series with its category, tag slugs and number of events. */
export type SeriesRecord = SeriesRow & { category_slug: string; category_name: string; tag_slugs: string[]; event_count: number };

/** An event with its series' ticker and slug. */
export type EventRecord = EventsRow & { series_ticker: string; series_slug: string };

/** A market with its event's ticker. */
export type MarketRecord = MarketsRow & { event_ticker: string };

/** A tag with the number of markets carrying it. */
export type TagRecord = TagsRow & { market_count: number };

export function seriesRecords(db: Queryable): Knex.QueryBuilder {
  return db('series as s')
    .join('categories as c', 'c.id', 's.category_id')
    .select(
      's.*',
      'c.slug as category_slug',
      'c.name as category_name',
      db.raw(`coalesce((select array_agg(t.slug order by t.slug) from series_tags st join tags t on t.id = st.tag_id where st.series_id = s.id), '{}') as tag_slugs`),
      db.raw('(select count(*)::int from events e where e.series_id = s.id) as event_count'),
    );
}

/** The columns of an EventsRow, named (a named statement must keep its columns when a migration adds one). */
const EVENT_COLUMNS = [
  'id', 'ticker', 'slug', 'series_id', 'title', 'description', 'mutually_exclusive', 'status', 'creator_id', 'start_date', 'strike_date',
  'closed_time', 'volume', 'liquidity', 'open_interest', 'created_at', 'updated_at',
].map((column) => `e.${column}`);

export function eventRecords(db: Queryable): Knex.QueryBuilder {
  return db('events as e').join('series as s', 's.id', 'e.series_id').select(...EVENT_COLUMNS, 's.ticker as series_ticker', 's.slug as series_slug');
}

export function marketRecords(db: Queryable): Knex.QueryBuilder {
  return db('markets as m').join('events as e', 'e.id', 'm.event_id').select('m.*', 'e.ticker as event_ticker');
}

export function tagRecords(db: Queryable): Knex.QueryBuilder {
  return db('tags as t').select('t.*', db.raw('(select count(*)::int from market_tags mt where mt.tag_id = t.id) as market_count'));
}

export async function findSeriesRecord(db: Queryable, where: { id?: string; ticker?: string }): Promise<SeriesRecord | undefined> {
  const q = seriesRecords(db);
  if (where.id !== undefined) q.where('s.id', where.id);
  if (where.ticker !== undefined) q.where('s.ticker', where.ticker);
  return q.first<SeriesRecord | undefined>();
}

export async function findEventRecord(db: Queryable, where: { id?: string; ticker?: string }): Promise<EventRecord | undefined> {
  const q = eventRecords(db);
  if (where.id !== undefined) q.where('e.id', where.id);
  if (where.ticker !== undefined) q.where('e.ticker', where.ticker);
  return q.first<EventRecord | undefined>();
}

export async function findMarketRecord(db: Queryable, where: { id?: string; ticker?: string }): Promise<MarketRecord | undefined> {
  const q = marketRecords(db);
  if (where.id !== undefined) q.where('m.id', where.id);
  if (where.ticker !== undefined) q.where('m.ticker', where.ticker);
  return q.first<MarketRecord | undefined>();
}

export async function findTagRecord(db: Queryable, where: { id?: string; slug?: string }): Promise<TagRecord | undefined> {
  const q = tagRecords(db);
  if (where.id !== undefined) q.where('t.id', where.id);
  if (where.slug !== undefined) q.where('t.slug', where.slug);
  return q.first<TagRecord | undefined>();
}

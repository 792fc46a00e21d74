import type { Knex } from 'knex';
import type { Queryable } from '../knex.js';
import type { EventView, MarketView, SeriesView, TagView } from '../rows.js';

/** Base queries of the catalogue's view records; callers add filters, order and limits. */

export function seriesViews(db: Queryable): Knex.QueryBuilder {
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

/** The columns of an EventRow, named (a named statement must keep its columns when a migration adds one). */
const EVENT_COLUMNS = [
  'id', 'ticker', 'slug', 'series_id', 'title', 'description', 'mutually_exclusive', 'status', 'creator_id', 'start_date', 'strike_date',
  'closed_time', 'volume', 'liquidity', 'open_interest', 'created_at', 'updated_at',
].map((column) => `e.${column}`);

export function eventViews(db: Queryable): Knex.QueryBuilder {
  return db('events as e').join('series as s', 's.id', 'e.series_id').select(...EVENT_COLUMNS, 's.ticker as series_ticker', 's.slug as series_slug');
}

export function marketViews(db: Queryable): Knex.QueryBuilder {
  return db('markets as m').join('events as e', 'e.id', 'm.event_id').select('m.*', 'e.ticker as event_ticker');
}

export function tagViews(db: Queryable): Knex.QueryBuilder {
  return db('tags as t').select('t.*', db.raw('(select count(*)::int from market_tags mt where mt.tag_id = t.id) as market_count'));
}

export async function findSeriesView(db: Queryable, where: { id?: string; ticker?: string }): Promise<SeriesView | undefined> {
  const q = seriesViews(db);
  if (where.id !== undefined) q.where('s.id', where.id);
  if (where.ticker !== undefined) q.where('s.ticker', where.ticker);
  return q.first();
}

export async function findEventView(db: Queryable, where: { id?: string; ticker?: string }): Promise<EventView | undefined> {
  const q = eventViews(db);
  if (where.id !== undefined) q.where('e.id', where.id);
  if (where.ticker !== undefined) q.where('e.ticker', where.ticker);
  return q.first();
}

export async function findMarketView(db: Queryable, where: { id?: string; ticker?: string }): Promise<MarketView | undefined> {
  const q = marketViews(db);
  if (where.id !== undefined) q.where('m.id', where.id);
  if (where.ticker !== undefined) q.where('m.ticker', where.ticker);
  return q.first();
}

export async function findTagView(db: Queryable, where: { id?: string; slug?: string }): Promise<TagView | undefined> {
  const q = tagViews(db);
  if (where.id !== undefined) q.where('t.id', where.id);
  if (where.slug !== undefined) q.where('t.slug', where.slug);
  return q.first();
}

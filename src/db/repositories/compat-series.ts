import type { Knex } from 'knex';
import type { Queryable } from '../knex.js';
import type { SeriesRow, TagsRow } from '../tables.js';

/** Reads of the compatibility series endpoints (`/series`, `/series/{id}`, `/series-summary/...`). */

export type CompatTagRefRecord = Pick<TagsRow, 'id' | 'slug' | 'label'>;

/** A series with its tags, as the compatibility list shows it. */
export interface CompatSeriesRecord extends SeriesRow {
  tags: CompatTagRefRecord[];
}

/** The single read adds the sums over the series' events. */
export interface CompatSeriesDetailRecord extends CompatSeriesRecord {
  volume: string;
  liquidity: string;
}

export type CompatSeriesOrderKey = 'id' | 'ticker' | 'slug' | 'title' | 'recurrence' | 'seriesType' | 'updatedAt' | 'event_count' | 'createdAt';

/** Sort key -> column of `series` (event_count is computed). */
const ORDER_COLUMNS: Record<CompatSeriesOrderKey, string> = {
  id: 'id',
  ticker: 'ticker',
  slug: 'slug',
  title: 'title',
  recurrence: 'frequency',
  seriesType: 'series_type',
  updatedAt: 'updated_at',
  createdAt: 'created_at',
  event_count: 'event_count',
};

export interface CompatSeriesListQuery {
  /** Frequency, compared case-insensitively. */
  recurrence?: string;
  /** The `slug` filter: a series matches one of these ids, or one of these tickers or slugs. */
  series?: { ids: string[]; keys: string[] };
  /** `categories_ids`: category ids or slugs. */
  categoriesById?: { ids: string[]; slugs: string[] };
  /** `categories_labels`: category labels (compared case-insensitively), or slugs. */
  categoriesByLabel?: { labels: string[]; slugs: string[] };
  order: CompatSeriesOrderKey;
  ascending: boolean;
  offset: number;
  limit: number;
}

const TAGS_JSON = `coalesce((select json_agg(json_build_object('id', t.id::text, 'slug', t.slug, 'label', t.label) order by t.slug)
  from series_tags st join tags t on t.id = st.tag_id where st.series_id = s.id), '[]'::json) as tags`;

/** One page of series: the page is cut first (filters, order, offset, limit), then its tags are fetched in the same query. */
export async function listCompatSeries(db: Queryable, query: CompatSeriesListQuery): Promise<CompatSeriesRecord[]> {
  const direction = query.ascending ? 'asc' : 'desc';
  const column = ORDER_COLUMNS[query.order];
  const page = db('series as s').select('s.*');
  if (query.order === 'event_count') {
    page.select(db.raw('(select count(*) from events e where e.series_id = s.id) as event_count'));
    page.orderBy([{ column: 'event_count', order: direction }, { column: 's.id', order: direction }]);
  } else {
    page.orderBy([{ column: `s.${column}`, order: direction }, ...(column === 'id' ? [] : [{ column: 's.id', order: direction }])]);
  }
  if (query.recurrence !== undefined) page.whereRaw('lower(s.frequency) = lower(?)', [query.recurrence]);
  const { series, categoriesById, categoriesByLabel } = query;
  if (series) {
    page.where((w) => {
      w.whereIn('s.ticker', series.keys).orWhereIn('s.slug', series.keys);
      if (series.ids.length > 0) w.orWhereIn('s.id', series.ids);
    });
  }
  if (categoriesById) {
    page.whereIn('s.category_id', (sub: Knex.QueryBuilder) => {
      sub.select('c.id').from('categories as c').where((w) => {
        w.whereIn('c.slug', categoriesById.slugs);
        if (categoriesById.ids.length > 0) w.orWhereIn('c.id', categoriesById.ids);
      });
    });
  }
  if (categoriesByLabel) {
    page.whereIn('s.category_id', (sub: Knex.QueryBuilder) => {
      sub
        .select('c.id')
        .from('categories as c')
        .where((w) => {
          w.whereIn('c.slug', categoriesByLabel.slugs);
          const { labels } = categoriesByLabel;
          if (labels.length > 0) w.orWhereRaw(`lower(c.name) in (${labels.map(() => 'lower(?)').join(', ')})`, labels);
        });
    });
  }
  page.offset(query.offset).limit(query.limit);

  const outerColumn = column === 'event_count' ? 's.event_count' : `s.${column}`;
  return db
    .with('page', page)
    .from('page as s')
    .select('s.*', db.raw(TAGS_JSON))
    .orderBy([{ column: outerColumn, order: direction }, ...(column === 'id' ? [] : [{ column: 's.id', order: direction }])]);
}

/** One series by exactly one of id, ticker or slug, with its tags and the sums over its events. */
export async function findCompatSeries(db: Queryable, where: { id: string } | { ticker: string } | { slug: string }): Promise<CompatSeriesDetailRecord | undefined> {
  const q = db('series as s').select(
    's.*',
    db.raw(TAGS_JSON),
    db.raw('(select coalesce(sum(e.volume), 0) from events e where e.series_id = s.id) as volume'),
    db.raw('(select coalesce(sum(e.liquidity), 0) from events e where e.series_id = s.id) as liquidity'),
  );
  if ('id' in where) q.where('s.id', where.id);
  else if ('ticker' in where) q.where('s.ticker', where.ticker);
  else q.where('s.slug', where.slug);
  return q.first<CompatSeriesDetailRecord | undefined>();
}

/** One series row by exactly one of id, ticker or slug. */
export async function findSeriesRow(db: Queryable, where: { id: string } | { ticker: string } | { slug: string }): Promise<SeriesRow | undefined> {
  const q = db<SeriesRow>('series as s').select('s.*');
  if ('id' in where) q.where('s.id', where.id);
  else if ('ticker' in where) q.where('s.ticker', where.ticker);
  else q.where('s.slug', where.slug);
  return q.first<SeriesRow | undefined>();
}

/** Visible (not hidden) comments across the markets of the series' events. */
export async function countSeriesComments(db: Queryable, seriesId: string): Promise<number> {
  const row = await db('comments as c')
    .join('markets as m', 'm.id', 'c.market_id')
    .join('events as e', 'e.id', 'm.event_id')
    .where('e.series_id', seriesId)
    .andWhere('c.hidden', false)
    .count<{ count: string }[]>('* as count')
    .first();
  return Number(row?.count ?? 0);
}

export interface EventDayRecord {
  /** `YYYY-MM-DD`, the UTC day of an event's start time. */
  day: string;
  /** The ISO week of that day. */
  week: number;
}

const DAY = `(e.start_date at time zone 'UTC')::date`;

/** The distinct UTC start days of the series' events, oldest first, with their ISO weeks. */
export async function listSeriesEventDays(db: Queryable, seriesId: string): Promise<EventDayRecord[]> {
  const rows = await db
    .from(db('events as e').distinct(db.raw(`${DAY} as d`)).where('e.series_id', seriesId).as('days'))
    .select(db.raw(`to_char(d, 'YYYY-MM-DD') as day`), db.raw('extract(week from d)::int as week'))
    .orderBy('d');
  return rows as EventDayRecord[];
}

/** The UTC start day and ISO week of the series' earliest (by start time) ACTIVE event. */
export async function findEarliestActiveEventDay(db: Queryable, seriesId: string): Promise<EventDayRecord | undefined> {
  return db('events as e')
    .select(db.raw(`to_char(${DAY}, 'YYYY-MM-DD') as day`), db.raw(`extract(week from ${DAY})::int as week`))
    .where({ 'e.series_id': seriesId, 'e.status': 'ACTIVE' })
    .orderBy([{ column: 'e.start_date' }, { column: 'e.id' }])
    .first<EventDayRecord | undefined>();
}

import type { Knex } from 'knex';
import type { Queryable } from '../knex.js';
import { plannedOnce, type ReadPools } from '../pools.js';
import type { EventsRow } from '../tables.js';
import type { CompatTagRecord } from './compat-tags.js';
import type { EventAnalyticsRecord } from './events.js';

/**
 * Queries of the compatibility events (`/events`, `/events/keyset`, `/events/pagination`, `/events/results`
 * and the single reads). Every list goes through `filteredEvents`, the one builder of the shared filter set.
 */

/** The filters of a compatibility event list, already parsed and resolved (tag ids) by the domain. */
export interface EventFilter {
  seriesTicker?: string;
  /** Series frequency, compared case-insensitively. */
  recurrence?: string;
  /** Each value matches an event slug or ticker. */
  slugs?: string[];
  /** Event ids (numeric strings) and tickers; an event matching either is kept. */
  idsOrTickers?: { ids: string[]; tickers: string[] };
  /** Each set: the event must carry at least one of these tag ids (sets combine by AND). */
  includeTagSets?: string[][];
  excludeTagIds?: string[];
  /** Decimal strings, compared as numeric. */
  liquidityMin?: string;
  liquidityMax?: string;
  volumeMin?: string;
  volumeMax?: string;
  /** ISO timestamps (UTC), inclusive bounds. */
  startDateMin?: string;
  startDateMax?: string;
  endDateMin?: string;
  endDateMax?: string;
  /** Keyset `start_time_min`/`max`: bounds on the start time too, kept apart from `start_date_*`. */
  startTimeMin?: string;
  startTimeMax?: string;
  /** A lower-cased LIKE pattern matched against `lower(title) || ' ' || lower(ticker)`. */
  titleLike?: string;
  /** `YYYY-MM-DD`: UTC day of the start time. */
  eventDate?: string;
  seriesIds?: string[];
  /** true: ACTIVE only. */
  active?: boolean;
  /** false: ACTIVE only; true: not ACTIVE. */
  closed?: boolean;
  /** true: live only (ACTIVE, started, before strike); false: not live. */
  live?: boolean;
}

/** Columns the compatibility lists sort by (the domain maps the `order` keys to them); ties go by id. */
export type OrderColumn =
  | 'id' | 'ticker' | 'slug' | 'title' | 'created_at' | 'start_date' | 'updated_at' | 'strike_date' | 'volume' | 'liquidity' | 'open_interest' | 'closed_time';

export interface EventOrder {
  column: OrderColumn;
  ascending: boolean;
}

/** How a keyset sort column is carried in a cursor. */
export type KeysetColumn = 'id' | 'slug' | 'title' | 'created_at' | 'updated_at' | 'strike_date' | 'volume' | 'liquidity';
const TIMESTAMP_COLUMNS = new Set<string>(['created_at', 'updated_at', 'strike_date']);

/** One event of a compatibility list, with its series and whether it is live / ended (computed by the database). */
export type CompatEventRecord = Pick<
  EventsRow,
  | 'id' | 'ticker' | 'slug' | 'title' | 'description' | 'mutually_exclusive' | 'status' | 'start_date' | 'strike_date' | 'closed_time'
  | 'volume' | 'liquidity' | 'open_interest' | 'created_at' | 'updated_at' | 'series_id'
> & { series_ticker: string; series_slug: string; series_title: string; live: boolean; ended: boolean };

/** A keyset row also carries its sort value as text (timestamps to the microsecond). */
export interface CompatEventKeysetRecord extends CompatEventRecord {
  sort_value: string;
}

/** An event with its analytics, in the native catalogue's row shape (presented by the same presenter). */
export type CompatEventDetailRecord = CompatEventRecord & EventAnalyticsRecord;

const LIVE = `(e.status = 'ACTIVE' and e.start_date <= now() and now() < e.strike_date)`;
const ENDED = `(e.strike_date <= now() or e.status <> 'ACTIVE')`;
const NUMERIC_ID = /^[0-9]{1,18}$/;

/** The events matching the filter: `events as e` only (no join), so that counting and paging share it. */
function filteredEvents(db: Queryable, filter: EventFilter): Knex.QueryBuilder {
  const q = db('events as e');
  if (filter.seriesTicker !== undefined) q.whereIn('e.series_id', db('series').select('id').where('ticker', filter.seriesTicker));
  if (filter.recurrence !== undefined) q.whereIn('e.series_id', db('series').select('id').whereRaw('lower(frequency) = lower(?)', [filter.recurrence]));
  if (filter.slugs) {
    const slugs = filter.slugs;
    q.where((w) => { w.whereRaw('e.slug = any(?::text[])', [slugs]).orWhereRaw('e.ticker = any(?::text[])', [slugs]); });
  }
  if (filter.idsOrTickers) {
    const { ids, tickers } = filter.idsOrTickers;
    q.where((w) => { w.whereRaw('e.id = any(?::bigint[])', [ids]).orWhereRaw('e.ticker = any(?::text[])', [tickers]); });
  }
  for (const tagIds of filter.includeTagSets ?? []) {
    q.whereExists(db('event_tags as et').select(db.raw('1')).whereRaw('et.event_id = e.id').whereRaw('et.tag_id = any(?::bigint[])', [tagIds]));
  }
  if (filter.excludeTagIds && filter.excludeTagIds.length > 0) {
    const tagIds = filter.excludeTagIds;
    q.whereNotExists(db('event_tags as et').select(db.raw('1')).whereRaw('et.event_id = e.id').whereRaw('et.tag_id = any(?::bigint[])', [tagIds]));
  }
  if (filter.liquidityMin !== undefined) q.whereRaw('e.liquidity >= ?::numeric', [filter.liquidityMin]);
  if (filter.liquidityMax !== undefined) q.whereRaw('e.liquidity <= ?::numeric', [filter.liquidityMax]);
  if (filter.volumeMin !== undefined) q.whereRaw('e.volume >= ?::numeric', [filter.volumeMin]);
  if (filter.volumeMax !== undefined) q.whereRaw('e.volume <= ?::numeric', [filter.volumeMax]);
  if (filter.startDateMin !== undefined) q.whereRaw('e.start_date >= ?::timestamptz', [filter.startDateMin]);
  if (filter.startDateMax !== undefined) q.whereRaw('e.start_date <= ?::timestamptz', [filter.startDateMax]);
  if (filter.endDateMin !== undefined) q.whereRaw('e.strike_date >= ?::timestamptz', [filter.endDateMin]);
  if (filter.endDateMax !== undefined) q.whereRaw('e.strike_date <= ?::timestamptz', [filter.endDateMax]);
  if (filter.startTimeMin !== undefined) q.whereRaw('e.start_date >= ?::timestamptz', [filter.startTimeMin]);
  if (filter.startTimeMax !== undefined) q.whereRaw('e.start_date <= ?::timestamptz', [filter.startTimeMax]);
  if (filter.titleLike !== undefined) q.whereRaw(`(lower(e.title) || ' ' || lower(e.ticker)) like ?`, [filter.titleLike]);
  if (filter.eventDate !== undefined) q.whereRaw(`((e.start_date at time zone 'UTC')::date) = ?::date`, [filter.eventDate]);
  if (filter.seriesIds) q.whereRaw('e.series_id = any(?::bigint[])', [filter.seriesIds]);
  // Written into the text, not bound: the partial indexes per status serve only a condition the planner can
  // see (migration 0006), in a plan made without the values too.
  if (filter.active === true) q.whereRaw(`e.status = 'ACTIVE'`);
  if (filter.closed !== undefined) q.whereRaw(filter.closed ? `e.status <> 'ACTIVE'` : `e.status = 'ACTIVE'`);
  if (filter.live !== undefined) q.whereRaw(filter.live ? LIVE : `not ${LIVE}`);
  return q;
}

/**
 * Joins the events of `q` (events, or a derived table of them, as `e`) to their series and selects the row
 * columns with the computed flags. The join is part of the paged query itself, so that each event of the page
 * finds its series through `series_pkey` instead of the page being joined to all of `series` afterwards.
 */
function withSeries(db: Queryable, q: Knex.QueryBuilder, extra: Array<string | Knex.Raw> = []): Knex.QueryBuilder {
  return q
    .join('series as s', 's.id', 'e.series_id')
    .clearSelect()
    .select(
      'e.id', 'e.ticker', 'e.slug', 'e.title', 'e.description', 'e.mutually_exclusive', 'e.status', 'e.start_date', 'e.strike_date',
      'e.closed_time', 'e.volume', 'e.liquidity', 'e.open_interest', 'e.created_at', 'e.updated_at', 'e.series_id',
      's.ticker as series_ticker', 's.slug as series_slug', 's.title as series_title',
      db.raw(`${LIVE} as live`), db.raw(`${ENDED} as ended`),
      ...extra,
    );
}

/**
 * The statuses a filter of nothing but `active` and `closed` keeps ('all': no filter at all); undefined when
 * anything else filters (`live` too: it depends on the time).
 */
function statusesOnly(filter: EventFilter): 'all' | 'ACTIVE' | 'not ACTIVE' | undefined {
  if (!Object.entries(filter).every(([key, value]) => value === undefined || key === 'active' || key === 'closed')) return undefined;
  const active = filter.active === true || filter.closed === false;
  const inactive = filter.closed === true;
  if (active && inactive) return undefined;
  return active ? 'ACTIVE' : inactive ? 'not ACTIVE' : 'all';
}

/** The filters that keep a list's page a default one: their conditions are written into its text. */
const STATUS_FILTERS = new Set<string>(['active', 'closed', 'live']);

/**
 * Where a list runs (plannedOnce): a default page (no filter but the status ones) as a named statement,
 * `parts` naming what else its text depends on; any other filter planned for its values.
 */
function listStatement(pools: ReadPools, filter: EventFilter, ...parts: unknown[]): { db: Queryable; name: string | undefined } {
  const isDefault = Object.entries(filter).every(([key, value]) => value === undefined || STATUS_FILTERS.has(key));
  return plannedOnce(pools, isDefault ? JSON.stringify(['compat-events', filter.active, filter.closed, filter.live, ...parts]) : undefined);
}

const named = (q: Knex.QueryBuilder, name: string | undefined) => (name === undefined ? q : q.options({ name }));

function orderBy(q: Knex.QueryBuilder, order: EventOrder): Knex.QueryBuilder {
  const direction = order.ascending ? 'asc' : 'desc';
  if (order.column !== 'id') q.orderBy(`e.${order.column}`, direction);
  return q.orderBy('e.id', direction);
}

/** One offset page of the matching events, each joined to its series. */
export async function listEventsByOffset(pools: ReadPools, filter: EventFilter, order: EventOrder, window: { offset: number; limit: number }): Promise<CompatEventRecord[]> {
  // (an offset of 0 is left out of the text)
  const { db, name } = listStatement(pools, filter, 'offset', order.column, order.ascending, window.offset > 0);
  return (await named(orderBy(withSeries(db, filteredEvents(db, filter)), order).offset(window.offset).limit(window.limit), name)) as CompatEventRecord[];
}

/** Up to this many ACTIVE events past their strike time are handed to the results query as an id list. */
const PAST_STRIKE_ID_LIST = 1000;

/**
 * One offset page of the ended events (`/events/results`): not ACTIVE, or ACTIVE past the strike time. The two
 * sets are read as two branches, each cut at the window's end, then merged (an `OR` of the two would leave no
 * index to read in order). Inactive events come in index order (partial indexes per state, migration 0006).
 * ACTIVE events past their strike are few (an event closes soon after its strike): their ids are read first
 * from the strike-time index, so that the planner sees the exact list instead of guessing from statistics that
 * cannot relate status and strike time; past `PAST_STRIKE_ID_LIST` of them, the branch filters as it goes.
 */
export async function listEndedEventsByOffset(db: Queryable, filter: EventFilter, order: EventOrder, window: { offset: number; limit: number }): Promise<CompatEventRecord[]> {
  const end = window.offset + window.limit;
  const pastStrikeIds: string[] = (
    await db('events').select<Array<{ id: string }>>('id').where('status', 'ACTIVE').whereRaw('strike_date <= now()').orderBy('strike_date').limit(PAST_STRIKE_ID_LIST + 1)
  ).map((r) => String(r.id));
  const inactive = orderBy(filteredEvents(db, filter).select('e.*').where('e.status', '<>', 'ACTIVE'), order).limit(end);
  let source: Knex.QueryBuilder | Knex.Raw = inactive;
  if (pastStrikeIds.length > 0) {
    const pastStrike = filteredEvents(db, filter).select('e.*').where('e.status', 'ACTIVE').whereRaw('e.strike_date <= now()');
    if (pastStrikeIds.length <= PAST_STRIKE_ID_LIST) pastStrike.whereRaw('e.id = any(?::bigint[])', [pastStrikeIds]);
    source = db.raw('(? union all ?)', [inactive, orderBy(pastStrike, order).limit(end)]);
  }
  return (await orderBy(withSeries(db, db.from(db.raw('? as e', [source]))), order).offset(window.offset).limit(window.limit)) as CompatEventRecord[];
}

/** Matching events, counted up to `cap` (so the cost of the count is bounded). */
export async function countEvents(pools: ReadPools, filter: EventFilter, cap: number): Promise<number> {
  const statuses = statusesOnly(filter);
  if (statuses !== undefined) {
    // Filtered by status alone: read from event_status_counts (migration 0024, kept by triggers).
    const counts = pools.db('event_status_counts').sum<Array<{ total: string | null }>>('events as total');
    if (statuses === 'ACTIVE') counts.where('status', 'ACTIVE');
    else if (statuses === 'not ACTIVE') counts.whereNot('status', 'ACTIVE');
    const row = await counts.first();
    return Math.min(Number(row?.total ?? 0), cap);
  }
  const { db, name } = listStatement(pools, filter, 'count');
  const rows = filteredEvents(db, filter).select(db.raw('1')).limit(cap);
  const result = (await named(db.from(rows.as('x')).count('* as count'), name)) as Array<{ count: string }>;
  return Number(result[0]!.count);
}

/** The sort value of a keyset column as text: timestamps to the microsecond in UTC, numerics exactly. */
function sortValueSql(column: KeysetColumn): string {
  if (TIMESTAMP_COLUMNS.has(column)) return `to_char(e.${column} at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"')`;
  if (column === 'id') return 'e.id::text';
  return `e.${column}::text`;
}

function sortValueCast(column: KeysetColumn): string {
  if (TIMESTAMP_COLUMNS.has(column)) return 'timestamptz';
  if (column === 'volume' || column === 'liquidity') return 'numeric';
  return 'text';
}

/**
 * One keyset page: rows strictly after `after` (the last row's sort value and id) in the order, found with a
 * row comparison on the (column, id) index, so that a page deep in the list costs what the first one does.
 */
export async function listEventsByKeyset(
  pools: ReadPools,
  filter: EventFilter,
  order: { column: KeysetColumn; ascending: boolean },
  after: { value: string; id: number } | undefined,
  limit: number,
): Promise<CompatEventKeysetRecord[]> {
  const { db, name } = listStatement(pools, filter, 'keyset', order.column, order.ascending, after !== undefined);
  const direction = order.ascending ? 'asc' : 'desc';
  const comparison = order.ascending ? '>' : '<';
  const page = withSeries(db, filteredEvents(db, filter), [db.raw(`${sortValueSql(order.column)} as sort_value`)]);
  if (after) {
    if (order.column === 'id') page.whereRaw(`e.id ${comparison} ?::bigint`, [after.id]);
    else page.whereRaw(`(e.${order.column}, e.id) ${comparison} (?::${sortValueCast(order.column)}, ?::bigint)`, [after.value, after.id]);
  }
  if (order.column !== 'id') page.orderBy(`e.${order.column}`, direction);
  return (await named(page.orderBy('e.id', direction).limit(limit), name)) as CompatEventKeysetRecord[];
}

/** The event whose id or ticker is `value`, or whose slug or ticker is `value`, with its analytics. */
export async function findEventDetail(db: Queryable, by: 'idOrTicker' | 'slugOrTicker', value: string): Promise<CompatEventDetailRecord | undefined> {
  const page = withSeries(db, db('events as e'), [db.raw('e.id as event_id')]);
  if (by === 'idOrTicker') {
    if (NUMERIC_ID.test(value)) page.where((w) => { w.where('e.id', value).orWhere('e.ticker', value); });
    else page.where('e.ticker', value);
    // an id match wins over a ticker match
    if (NUMERIC_ID.test(value)) page.orderByRaw('(e.id = ?::bigint) desc', [value]);
  } else {
    page.where((w) => { w.where('e.slug', value).orWhere('e.ticker', value); }).orderByRaw('(e.slug = ?) desc', [value]);
  }
  page.limit(1);
  return db
    .from(page.as('e'))
    .select<CompatEventDetailRecord[]>('e.*', db.raw('a.*'))
    .joinRaw(
      `cross join lateral (
        select
          count(*)::int as market_count,
          (count(*) filter (where m.status = 'ACTIVE'))::int as active_count,
          (count(*) filter (where m.status = 'CLOSED'))::int as closed_count,
          (count(*) filter (where m.status = 'RESOLVED'))::int as resolved_count,
          (count(*) filter (where m.result = 'yes'))::int as resolved_yes_count,
          (count(*) filter (where m.result = 'no'))::int as resolved_no_count,
          (count(*) filter (where m.result = 'invalid'))::int as invalid_count,
          coalesce(sum(m.volume), 0)::text as total_volume,
          coalesce(sum(m.liquidity), 0)::text as total_liquidity,
          coalesce(sum(m.last_yes_price), 0)::text as yes_price_sum,
          round(avg(m.last_yes_price), 4)::text as avg_yes_price,
          min(m.last_yes_price)::text as min_yes_price,
          max(m.last_yes_price)::text as max_yes_price
        from markets m where m.event_id = e.id
      ) a`,
    )
    .first();
}

/** The id of the event whose id or ticker is `value`. */
export async function findEventId(db: Queryable, value: string): Promise<string | undefined> {
  const q = db('events').select<Array<{ id: string }>>('id').limit(1);
  if (NUMERIC_ID.test(value)) q.where((w) => { w.where('id', value).orWhere('ticker', value); }).orderByRaw('(id = ?::bigint) desc', [value]);
  else q.where('ticker', value);
  const row = await q.first();
  return row ? String(row.id) : undefined;
}

/** The tags an event carries, with the number of ACTIVE events carrying each. */
export async function listEventTags(db: Queryable, eventId: string): Promise<CompatTagRecord[]> {
  return db('event_tags as et')
    .join('tags as t', 't.id', 'et.tag_id')
    .where('et.event_id', eventId)
    .select(
      't.*',
      db.raw('coalesce((select c.active_events from tag_active_event_counts c where c.tag_id = t.id), 0) as active_events_count'),
    )
    .orderBy('t.id', 'asc');
}

/** Visible (not hidden) comments across the event's markets. */
export async function countVisibleComments(db: Queryable, eventId: string): Promise<number> {
  const row = await db('comments as c')
    .join('markets as m', 'm.id', 'c.market_id')
    .where('m.event_id', eventId)
    .where('c.hidden', false)
    .count<Array<{ count: string }>>('* as count')
    .first();
  return Number(row?.count ?? 0);
}

/** Ids of the tags named by id (numeric strings) or by slug. */
export async function resolveTagIds(db: Queryable, names: { ids: string[]; slugs: string[] }): Promise<string[]> {
  if (names.ids.length === 0 && names.slugs.length === 0) return [];
  const rows = await db('tags')
    .select('id')
    .where((w) => { w.whereRaw('id = any(?::bigint[])', [names.ids]).orWhereRaw('slug = any(?::text[])', [names.slugs]); });
  return rows.map((r: { id: string }) => String(r.id));
}

/**
 * The tags co-occurring with any of these tags on the same markets, the tags themselves included: read from
 * `tag_market_pairs` (markets shared by each pair of tags, kept by triggers; migration 0003).
 */
export async function relatedTagIds(db: Queryable, tagIds: string[]): Promise<string[]> {
  if (tagIds.length === 0) return [];
  const rows = await db('tag_market_pairs').distinct('other_tag_id').whereRaw('tag_id = any(?::bigint[])', [tagIds]).where('markets', '>', 0);
  return [...new Set([...tagIds, ...rows.map((r: { other_tag_id: string }) => String(r.other_tag_id))])];
}

import type { Queryable } from '../knex.js';
import { plannedOnce, type ReadPools } from '../pools.js';
import type { CatalogueStatus } from '../tables.js';
import { eventRecords, findEventRecord, type EventRecord } from './catalogue.js';

/** Reads of the native events (`/api/events`, `/api/events/{event_ticker}`). */

/** Position of a row in the newest-first order: its creation time (to the microsecond, UTC) and id. */
export interface CreatedKey {
  createdAt: string;
  id: number;
}

/** The creation time as text to the microsecond, so that a cursor reproduces it exactly. */
export const createdAtText = (alias: string) => `to_char(${alias}.created_at at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"')`;

export interface EventListFilter {
  seriesTicker?: string;
  status?: CatalogueStatus;
}

export interface EventPageRecord extends EventRecord {
  sort_created_at: string;
}

/** Rollups over the markets of one event. */
export interface EventAnalyticsRecord {
  event_id: string;
  market_count: number;
  active_count: number;
  closed_count: number;
  resolved_count: number;
  resolved_yes_count: number;
  resolved_no_count: number;
  invalid_count: number;
  total_volume: string;
  total_liquidity: string;
  yes_price_sum: string;
  avg_yes_price: string | null;
  min_yes_price: string | null;
  max_yes_price: string | null;
}

/** Written into the text, not bound: the partial indexes per status serve only a condition the planner can see. */
const STATUS_IS: Readonly<Record<CatalogueStatus, string>> = {
  ACTIVE: `e.status = 'ACTIVE'`,
  CLOSED: `e.status = 'CLOSED'`,
  RESOLVED: `e.status = 'RESOLVED'`,
};

/**
 * One page of events, newest first (created_at desc, id desc), strictly after `after`. The filters and
 * the order run on the (series_id | status, created_at, id) indexes whatever the values, so the page is a
 * named statement planned once per connection (plannedOnce); the series join is by primary key.
 */
export async function listEvents(pools: ReadPools, filter: EventListFilter, after: CreatedKey | undefined, limit: number): Promise<EventPageRecord[]> {
  const { db, name } = plannedOnce(pools, JSON.stringify(['events', filter.seriesTicker !== undefined, filter.status ?? null, after !== undefined]));
  const q = eventRecords(db).select(db.raw(`${createdAtText('e')} as sort_created_at`));
  if (filter.seriesTicker !== undefined) q.whereRaw('e.series_id = (select id from series where ticker = ?)', [filter.seriesTicker]);
  if (filter.status !== undefined) q.whereRaw(STATUS_IS[filter.status]);
  if (after) q.whereRaw('(e.created_at, e.id) < (?::timestamptz, ?::bigint)', [after.createdAt, after.id]);
  return (await q.orderBy('e.created_at', 'desc').orderBy('e.id', 'desc').limit(limit).options({ name })) as EventPageRecord[];
}

export async function findEventByTicker(db: Queryable, ticker: string): Promise<EventRecord | undefined> {
  return findEventRecord(db, { ticker });
}

/** The analytics of these events, one row per event that has markets (events without markets have none). */
export async function listEventAnalytics(pools: ReadPools, eventIds: string[]): Promise<EventAnalyticsRecord[]> {
  if (eventIds.length === 0) return [];
  const { db, name } = plannedOnce(pools, 'event-analytics');
  return db('markets as m')
    .whereRaw('m.event_id = any(?::bigint[])', [eventIds])
    .groupBy('m.event_id')
    .select(
      db.raw('m.event_id::text as event_id'),
      db.raw('count(*)::int as market_count'),
      db.raw(`(count(*) filter (where m.status = 'ACTIVE'))::int as active_count`),
      db.raw(`(count(*) filter (where m.status = 'CLOSED'))::int as closed_count`),
      db.raw(`(count(*) filter (where m.status = 'RESOLVED'))::int as resolved_count`),
      db.raw(`(count(*) filter (where m.result = 'yes'))::int as resolved_yes_count`),
      db.raw(`(count(*) filter (where m.result = 'no'))::int as resolved_no_count`),
      db.raw(`(count(*) filter (where m.result = 'invalid'))::int as invalid_count`),
      db.raw('sum(m.volume)::text as total_volume'),
      db.raw('sum(m.liquidity)::text as total_liquidity'),
      db.raw('coalesce(sum(m.last_yes_price), 0)::text as yes_price_sum'),
      db.raw('round(avg(m.last_yes_price), 4)::text as avg_yes_price'),
      db.raw('min(m.last_yes_price)::text as min_yes_price'),
      db.raw('max(m.last_yes_price)::text as max_yes_price'),
    )
    .options({ name });
}

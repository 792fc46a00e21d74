import type { Knex } from 'knex';
import type { Queryable } from '../knex.js';
import { plannedOnce, type ReadPools } from '../pools.js';
import type { CatalogueStatus } from '../tables.js';
import { findMarketRecord, type MarketRecord } from './catalogue.js';
import { createdAtText, type CreatedKey } from './events.js';

/** Reads of the native markets (`/api/markets`, `/api/markets/{ticker}`, nested market summaries). */

export interface MarketListFilter {
  eventTicker?: string;
  seriesTicker?: string;
  status?: CatalogueStatus;
  tickers?: string[];
}

export interface MarketPageRecord extends MarketRecord {
  sort_created_at: string;
}

/** The markets matching the filter: `markets as m` alone, so that counting and paging share it. */
function filteredMarkets(db: Queryable, filter: MarketListFilter): Knex.QueryBuilder {
  const q = db('markets as m');
  if (filter.eventTicker !== undefined) q.whereRaw('m.event_id = (select id from events where ticker = ?)', [filter.eventTicker]);
  if (filter.seriesTicker !== undefined) {
    q.whereRaw('m.event_id in (select id from events where series_id = (select id from series where ticker = ?))', [filter.seriesTicker]);
  }
  if (filter.status !== undefined) q.where('m.status', filter.status);
  if (filter.tickers !== undefined) q.whereRaw('m.ticker = any(?::text[])', [filter.tickers]);
  return q;
}

/** A page chosen on `markets` alone (newest first), then joined to the markets' events for their tickers. */
function withEventTicker(db: Queryable, page: Knex.QueryBuilder): Knex.QueryBuilder {
  return db
    .from(page.as('m'))
    .join('events as e', 'e.id', 'm.event_id')
    .select('m.*', 'e.ticker as event_ticker')
    .orderBy('m.created_at', 'desc')
    .orderBy('m.id', 'desc');
}

function newestFirst(q: Knex.QueryBuilder): Knex.QueryBuilder {
  return q.orderBy('m.created_at', 'desc').orderBy('m.id', 'desc');
}

/**
 * One offset page, newest first (created_at desc, id desc). The rows skipped are read from the index alone
 * (ids only); only the page's rows are then fetched.
 */
export async function listMarketsByOffset(db: Queryable, filter: MarketListFilter, window: { offset: number; limit: number }): Promise<MarketRecord[]> {
  const ids = newestFirst(filteredMarkets(db, filter).select('m.id')).offset(window.offset).limit(window.limit);
  return (await withEventTicker(db, db('markets as m').whereIn('m.id', ids).select('m.*'))) as MarketRecord[];
}

/** One keyset page, newest first, strictly after `after`. */
export async function listMarketsAfter(db: Queryable, filter: MarketListFilter, after: CreatedKey | undefined, limit: number): Promise<MarketPageRecord[]> {
  const page = filteredMarkets(db, filter).select('m.*', db.raw(`${createdAtText('m')} as sort_created_at`));
  if (after) page.whereRaw('(m.created_at, m.id) < (?::timestamptz, ?::bigint)', [after.createdAt, after.id]);
  return (await withEventTicker(db, newestFirst(page).limit(limit))) as MarketPageRecord[];
}

/**
 * Markets matching the filter. Without event, series or ticker filters, read from `market_status_counts`
 * (migration 0003, kept by triggers) instead of counting the table.
 */
export async function countMarkets(db: Queryable, filter: MarketListFilter): Promise<number> {
  if (filter.eventTicker === undefined && filter.seriesTicker === undefined && filter.tickers === undefined) {
    const q = db('market_status_counts').sum<Array<{ total: string | null }>>('markets as total');
    if (filter.status !== undefined) q.where('status', filter.status);
    const row = await q.first();
    return Number(row?.total ?? 0);
  }
  const row = await filteredMarkets(db, filter).count<Array<{ count: string }>>('* as count').first();
  return Number(row?.count ?? 0);
}

export async function findMarketByTicker(db: Queryable, ticker: string): Promise<MarketRecord | undefined> {
  return findMarketRecord(db, { ticker });
}

/** The fields of the market summary nested in an event (id, ticker, title, status, prices, volume, liquidity), and its event. */
export type MarketSummaryRecord = Pick<MarketRecord, 'id' | 'ticker' | 'event_id' | 'event_ticker' | 'title' | 'status' | 'last_yes_price' | 'last_no_price' | 'volume' | 'liquidity'>;

/** The market summaries of these events, by event then oldest first (id); only the summary's columns are read. */
export async function listMarketsOfEvents(pools: ReadPools, eventIds: string[]): Promise<MarketSummaryRecord[]> {
  if (eventIds.length === 0) return [];
  const { db, name } = plannedOnce(pools, 'markets-of-events');
  return db('markets as m')
    .join('events as e', 'e.id', 'm.event_id')
    .whereRaw('m.event_id = any(?::bigint[])', [eventIds])
    .select('m.id', 'm.ticker', 'm.event_id', 'e.ticker as event_ticker', 'm.title', 'm.status', 'm.last_yes_price', 'm.last_no_price', 'm.volume', 'm.liquidity')
    .orderBy('m.event_id')
    .orderBy('m.id')
    .options({ name });
}

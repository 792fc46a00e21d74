import type { Queryable } from '../knex.js';
import { findSeriesRecord, seriesRecords, type SeriesRecord } from './catalogue.js';
import { createdAtText, type CreatedKey } from './events.js';

/** Reads of the native series (`/api/series`, `/api/series/{series_ticker}`). */

export interface SeriesPageRecord extends SeriesRecord {
  sort_created_at: string;
}

/** One page of series, newest first (created_at desc, id desc), strictly after `after`. */
export async function listSeries(db: Queryable, filter: { categorySlug?: string }, after: CreatedKey | undefined, limit: number): Promise<SeriesPageRecord[]> {
  const q = seriesRecords(db).select(db.raw(`${createdAtText('s')} as sort_created_at`));
  if (filter.categorySlug !== undefined) q.whereRaw('s.category_id = (select id from categories where slug = ?)', [filter.categorySlug]);
  if (after) q.whereRaw('(s.created_at, s.id) < (?::timestamptz, ?::bigint)', [after.createdAt, after.id]);
  return (await q.orderBy('s.created_at', 'desc').orderBy('s.id', 'desc').limit(limit)) as SeriesPageRecord[];
}

export async function findSeriesByTicker(db: Queryable, ticker: string): Promise<SeriesRecord | undefined> {
  return findSeriesRecord(db, { ticker });
}

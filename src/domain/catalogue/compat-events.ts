import type { Db } from '../../db/knex.js';
import type { ReadPools } from '../../db/pools.js';
import * as repo from '../../db/repositories/compat-events.js';
import type { EventFilter, KeysetColumn, OrderColumn } from '../../db/repositories/compat-events.js';
import { DomainError, invalid, notFound } from '../errors.js';
import { decodeCursor, encodeCursor, type KeyPart } from '../pagination/cursor.js';
import { firstOf, listValues } from '../pagination/lists.js';
import { OFFSET_SCAN_WINDOW, offsetWindow } from '../pagination/offset.js';
import { canName } from './compat-refs.js';
import type { CompatEventDetail, CompatEvent, CompatTag } from './read-models.js';

/**
 * The compatibility events: `/events`, `/events/keyset`, `/events/pagination`, `/events/results` and the
 * single reads. The shared filter set is parsed once here (aliases merged, dates parsed, tags resolved) into
 * one `EventFilter` that the repository applies the same way for every list. Over the usual 400 lines because
 * the filter set (every parameter in every spelling) is one table that the four lists share.
 */

type List = string | string[] | undefined;

/** The shared filter parameters, every spelling. */
export interface SharedFilterQuery {
  series_ticker?: string;
  seriesTicker?: string;
  recurrence?: string;
  slug?: List;
  id?: List;
  tag_id?: List;
  tagId?: List;
  tag_slug?: List;
  tagSlug?: List;
  exclude_tag_id?: List;
  excludeTagId?: List;
  related_tags?: boolean;
  relatedTags?: boolean;
  liquidity_min?: string;
  liquidityMin?: string;
  liquidity_num_min?: string;
  liquidityNumMin?: string;
  liquidity_max?: string;
  liquidityMax?: string;
  liquidity_num_max?: string;
  liquidityNumMax?: string;
  volume_min?: string;
  volumeMin?: string;
  volume_num_min?: string;
  volumeNumMin?: string;
  volume_max?: string;
  volumeMax?: string;
  volume_num_max?: string;
  volumeNumMax?: string;
  start_date_min?: string;
  startDateMin?: string;
  start_date_max?: string;
  startDateMax?: string;
  end_date_min?: string;
  endDateMin?: string;
  end_date_max?: string;
  endDateMax?: string;
  order?: string;
  ascending?: boolean;
}

export interface ListQuery extends SharedFilterQuery {
  active?: boolean;
  closed?: boolean;
  archived?: boolean;
  featured?: boolean;
  cyom?: boolean;
  include_chat?: boolean;
  include_template?: boolean;
  limit?: number;
  offset?: number;
}

export interface KeysetQuery extends SharedFilterQuery {
  closed?: boolean;
  live?: boolean;
  after_cursor?: string;
  limit?: number;
  offset?: unknown;
  series_id?: List;
  game_id?: string;
  title_search?: string;
  event_date?: string;
  event_week?: number;
  created_by?: string;
  parent_event_id?: number;
  start_time_min?: string;
  start_time_max?: string;
}

/** The shared filters `/events/results` takes. */
const RESULTS_FILTERS = [
  'series_ticker', 'seriesTicker', 'slug', 'id', 'tag_id', 'tagId', 'tag_slug', 'tagSlug', 'exclude_tag_id', 'excludeTagId', 'related_tags', 'relatedTags',
] as const;

export type ResultsQuery = Pick<SharedFilterQuery, (typeof RESULTS_FILTERS)[number] | 'order' | 'ascending'> & { limit?: number; offset?: number };

/** `order` keys of `/events`, `/events/pagination` and `/events/results`, by column. */
export const LIST_ORDER_KEYS: Readonly<Record<string, OrderColumn>> = {
  id: 'id',
  ticker: 'ticker',
  slug: 'slug',
  title: 'title',
  createdAt: 'created_at',
  start_date: 'start_date',
  updatedAt: 'updated_at',
  endDate: 'strike_date',
  volume: 'volume',
  // No rolling 24-hour volume is kept: the total volume stands in for it.
  volume_24hr: 'volume',
  liquidity: 'liquidity',
  openInterest: 'open_interest',
  closed_time: 'closed_time',
  // No competitiveness score is kept: the liquidity (depth of the books) stands in for it.
  competitive: 'liquidity',
};

/** `order` keys of `/events/keyset`, by column. */
export const KEYSET_ORDER_KEYS: Readonly<Record<string, KeysetColumn>> = {
  id: 'id',
  slug: 'slug',
  title: 'title',
  createdAt: 'created_at',
  updatedAt: 'updated_at',
  endDate: 'strike_date',
  volume: 'volume',
  liquidity: 'liquidity',
};

const DEFAULT_LIMIT = 20;

/** The first key of a comma-separated `order`, checked against the allowed keys (400 naming them). */
export function parseOrderKey<T>(value: string | undefined, keys: Readonly<Record<string, T>>, fallback: string): { key: string; column: T } {
  const key = (value ?? '').split(',')[0]!.trim() || fallback;
  if (!Object.hasOwn(keys, key)) {
    const message = `order must be one of: ${Object.keys(keys).join(', ')}`;
    throw invalid(message, [{ location: 'query', path: 'order', message }]);
  }
  return { key, column: keys[key]! };
}

const DATE_TIME = /^(\d{4})-(\d{2})-(\d{2})(?:[Tt ](\d{2}):(\d{2}):(\d{2})(\.\d{1,9})?([Zz]|[+-]\d{2}:\d{2})?)?$/;

/**
 * A date filter value as an ISO instant to the microsecond (what PostgreSQL keeps): RFC 3339
 * (`2026-11-22T10:00:00Z`, `...+02:00`, fractions of a second), `YYYY-MM-DD HH:mm:ss` (UTC) or `YYYY-MM-DD`
 * (midnight UTC). Anything else, or an impossible date, is a 400 naming the parameter. A fraction finer than a
 * microsecond is rounded to the stored precision in the bound's favour: up for a lower bound (`*_min`: at or
 * after 10:00:00.0000001 is at or after 10:00:00.000001), down for an upper one.
 */
export function parseDateBound(name: string, value: string, rounding: 'up' | 'down' = name.endsWith('_min') ? 'up' : 'down'): string {
  const fail = () => {
    const message = `${name} must be an RFC 3339 timestamp, 'YYYY-MM-DD HH:mm:ss' or 'YYYY-MM-DD'`;
    return invalid(message, [{ location: 'query', path: name, message }]);
  };
  const match = DATE_TIME.exec(value);
  if (!match) throw fail();
  const [, y, mo, d, h = '0', mi = '0', s = '0', fraction = '', zone = 'Z'] = match;
  const year = Number(y);
  const month = Number(mo);
  const day = Number(d);
  const hour = Number(h);
  const minute = Number(mi);
  const second = Number(s);
  if (year < 1 || month < 1 || month > 12 || day < 1 || day > daysInMonth(year, month) || hour > 23 || minute > 59 || second > 59) throw fail();
  let offsetMinutes = 0;
  if (zone !== 'Z' && zone !== 'z') {
    const sign = zone.startsWith('-') ? -1 : 1;
    const [oh, om] = zone.slice(1).split(':').map(Number) as [number, number];
    if (oh > 23 || om > 59) throw fail();
    offsetMinutes = sign * (oh * 60 + om);
  }
  // the fraction in microseconds (0 to 1,000,000 after rounding up), kept apart from the milliseconds of a Date
  const nanos = `${fraction.slice(1)}000000000`.slice(0, 9);
  const micros = Number(nanos.slice(0, 6)) + (rounding === 'up' && Number(nanos.slice(6)) > 0 ? 1 : 0);
  const date = new Date(0);
  date.setUTCFullYear(year, month - 1, day);
  date.setUTCHours(hour, minute, second, 0);
  const instant = date.getTime() - offsetMinutes * 60_000 + Math.floor(micros / 1000);
  const result = new Date(instant);
  if (result.getUTCFullYear() < 1 || result.getUTCFullYear() > 9999) throw fail();
  return result.toISOString().replace(/Z$/, `${String(micros % 1000).padStart(3, '0')}Z`);
}

function daysInMonth(year: number, month: number): number {
  const leap = (year % 4 === 0 && year % 100 !== 0) || year % 400 === 0;
  return [31, leap ? 29 : 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31][month - 1]!;
}

const DAY = /^(\d{4})-(\d{2})-(\d{2})$/;

/** `YYYY-MM-DD` of a real day, or a 400 naming the parameter. */
export function parseDay(name: string, value: string): string {
  if (!DAY.test(value)) {
    const message = `${name} must be a day, 'YYYY-MM-DD'`;
    throw invalid(message, [{ location: 'query', path: name, message }]);
  }
  parseDateBound(name, value);
  return value;
}

const DECIMAL = /^[+-]?(\d+(\.\d*)?|\.\d+)([eE][+-]?\d{1,3})?$/;

/** A decimal bound, kept as the exact string the client sent (PostgreSQL compares it as numeric). */
export function parseDecimalBound(name: string, value: string | undefined): string | undefined {
  if (value === undefined) return undefined;
  if (value.length > 64 || !DECIMAL.test(value)) {
    const message = `${name} must be a decimal number`;
    throw invalid(message, [{ location: 'query', path: name, message }]);
  }
  return value;
}

/** A case-insensitive substring pattern for LIKE, with `%`, `_` and `\` matching themselves. */
export function containsPattern(text: string): string {
  return `%${text.toLowerCase().replace(/[\\%_]/g, (c) => `\\${c}`)}%`;
}

const NUMERIC_ID = /^[0-9]{1,18}$/;
const nonEmpty = (value: string | undefined): string | undefined => (value === undefined || value === '' ? undefined : value);
/** The values of a list filter that can name something: undefined when none was given, empty when none can. */
const nameable = (values: string[]): string[] | undefined => (values.length === 0 ? undefined : values.filter(canName));

/** Keyset cursor: which collection (sort key and direction) and the shape of its key. */
function keysetCursor(column: KeysetColumn, ascending: boolean): { collection: string; shape: KeyPart[] } {
  const collection = `compat-events:${column}:${ascending ? 'asc' : 'desc'}`;
  if (column === 'id') return { collection, shape: ['integer'] };
  if (column === 'created_at' || column === 'updated_at' || column === 'strike_date') return { collection, shape: ['timestamp', 'integer'] };
  return { collection, shape: ['text', 'integer'] };
}

const NUMERIC_TEXT = /^-?\d{1,30}(\.\d{1,30})?$/;

/**
 * The longest keyset cursor. An ordering by title or slug carries the whole value: a title of 300 characters
 * (the most an event may have, migration 0007) is at most 1,800 bytes of JSON (every character escaped as
 * `\u00XX`), about 2,500 characters of base64url with the rest of the cursor.
 */
export const KEYSET_CURSOR_MAX_LENGTH = 4096;

export function encodeKeysetCursor(column: KeysetColumn, ascending: boolean, row: { sort_value: string; id: string }): string {
  const { collection } = keysetCursor(column, ascending);
  return encodeCursor(collection, column === 'id' ? [Number(row.id)] : [row.sort_value, Number(row.id)]);
}

/** The position after which a keyset page starts; a malformed, tampered or foreign cursor is 400. */
export function decodeKeysetCursor(column: KeysetColumn, ascending: boolean, cursor: string): { value: string; id: number } {
  const { collection, shape } = keysetCursor(column, ascending);
  const message = 'after_cursor is not a cursor of this ordering; pass back the next_cursor of the previous page verbatim, with the same order and ascending';
  const malformed = () => invalid(message, [{ location: 'query', path: 'after_cursor', message: 'malformed cursor' }]);
  let key: Array<string | number>;
  try {
    key = decodeCursor(collection, cursor, shape, { maxLength: KEYSET_CURSOR_MAX_LENGTH });
  } catch (error) {
    if (error instanceof DomainError) throw malformed();
    throw error;
  }
  if (column === 'id') return { value: String(key[0]), id: key[0] as number };
  const [value, id] = key as [string, number];
  if ((column === 'volume' || column === 'liquidity') && !NUMERIC_TEXT.test(value)) throw malformed();
  if (id < 0) throw malformed();
  return { value, id };
}

/** A filter that matches nothing: the list is empty without a query. */
const NONE = null;

export class CompatEventService {
  private readonly db: Db;

  /** The lists choose between the pools (src/db/pools.ts plannedOnce); every other read uses the main one. */
  constructor(private readonly pools: ReadPools) {
    this.db = pools.db;
  }

  /** The shared filters as one `EventFilter`, or NONE when they can match nothing (an unknown tag, say). */
  async sharedFilter(q: SharedFilterQuery): Promise<EventFilter | typeof NONE> {
    const filter: EventFilter = {};
    // Stored text never holds NUL: a value holding one names nothing (and must not reach PostgreSQL, which
    // refuses NUL in text). A scalar filter naming nothing matches nothing; in a list, such values are dropped,
    // and a list left empty matches nothing.
    filter.seriesTicker = nonEmpty(firstOf(q.series_ticker, q.seriesTicker));
    filter.recurrence = nonEmpty(q.recurrence);
    if ([filter.seriesTicker, filter.recurrence].some((v) => v !== undefined && !canName(v))) return NONE;
    const slugs = nameable(listValues(q.slug));
    const ids = nameable(listValues(q.id));
    const tagIdValues = nameable(listValues(q.tag_id, q.tagId));
    const tagSlugValues = nameable(listValues(q.tag_slug, q.tagSlug));
    if ([slugs, ids, tagIdValues, tagSlugValues].some((values) => values?.length === 0)) return NONE;
    if (slugs) filter.slugs = slugs;
    if (ids) filter.idsOrTickers = { ids: ids.filter((v) => NUMERIC_ID.test(v)), tickers: ids };

    const related = firstOf(q.related_tags, q.relatedTags) ?? false;
    const includeSets: string[][] = [];
    for (const [values, slugsOnly] of [[tagIdValues, false], [tagSlugValues, true]] as const) {
      if (values === undefined) continue;
      let tagIds = await repo.resolveTagIds(this.db, { ids: slugsOnly ? [] : values.filter((v) => NUMERIC_ID.test(v)), slugs: values });
      if (tagIds.length === 0) return NONE;
      if (related) tagIds = await repo.relatedTagIds(this.db, tagIds);
      includeSets.push(tagIds);
    }
    if (includeSets.length > 0) filter.includeTagSets = includeSets;
    const excluded = listValues(q.exclude_tag_id, q.excludeTagId).filter(canName);
    if (excluded.length > 0) {
      const tagIds = await repo.resolveTagIds(this.db, { ids: excluded.filter((v) => NUMERIC_ID.test(v)), slugs: excluded });
      if (tagIds.length > 0) filter.excludeTagIds = tagIds;
    }

    filter.liquidityMin = parseDecimalBound('liquidity_min', firstOf(q.liquidity_min, q.liquidityMin, q.liquidity_num_min, q.liquidityNumMin));
    filter.liquidityMax = parseDecimalBound('liquidity_max', firstOf(q.liquidity_max, q.liquidityMax, q.liquidity_num_max, q.liquidityNumMax));
    filter.volumeMin = parseDecimalBound('volume_min', firstOf(q.volume_min, q.volumeMin, q.volume_num_min, q.volumeNumMin));
    filter.volumeMax = parseDecimalBound('volume_max', firstOf(q.volume_max, q.volumeMax, q.volume_num_max, q.volumeNumMax));
    const date = (name: string, ...values: Array<string | undefined>) => {
      const value = firstOf(...values);
      return value === undefined ? undefined : parseDateBound(name, value);
    };
    filter.startDateMin = date('start_date_min', q.start_date_min, q.startDateMin);
    filter.startDateMax = date('start_date_max', q.start_date_max, q.startDateMax);
    filter.endDateMin = date('end_date_min', q.end_date_min, q.endDateMin);
    filter.endDateMax = date('end_date_max', q.end_date_max, q.endDateMax);
    return filter;
  }

  /** `/events`: one offset page. */
  async list(q: ListQuery): Promise<CompatEvent[]> {
    const order = parseOrderKey(q.order, LIST_ORDER_KEYS, 'createdAt');
    const filter = await this.listFilter(q);
    const window = offsetWindow(q.offset ?? 0, q.limit ?? DEFAULT_LIMIT);
    if (filter === NONE || window.limit === 0) return [];
    return repo.listEventsByOffset(this.pools, filter, { column: order.column, ascending: q.ascending ?? false }, window);
  }

  /** `/events/pagination`: one offset page, whether more follow, and the matching rows up to the scan window. */
  async paginated(q: ListQuery): Promise<{ rows: CompatEvent[]; hasMore: boolean; totalResults: number }> {
    const order = parseOrderKey(q.order, LIST_ORDER_KEYS, 'createdAt');
    const filter = await this.listFilter(q);
    const window = offsetWindow(q.offset ?? 0, q.limit ?? DEFAULT_LIMIT);
    if (filter === NONE) return { rows: [], hasMore: false, totalResults: 0 };
    const [rows, totalResults] = await Promise.all([
      window.limit === 0 ? Promise.resolve([]) : repo.listEventsByOffset(this.pools, filter, { column: order.column, ascending: q.ascending ?? false }, window),
      repo.countEvents(this.pools, filter, OFFSET_SCAN_WINDOW),
    ]);
    return { rows, hasMore: window.offset + rows.length < totalResults, totalResults };
  }

  /** `/events/results`: resolved or ended events, one offset page. */
  async results(q: ResultsQuery): Promise<CompatEvent[]> {
    const order = parseOrderKey(q.order, LIST_ORDER_KEYS, 'createdAt');
    // Only the documented subset of the shared filters: any other query parameter is ignored.
    const filter = await this.sharedFilter(Object.fromEntries(RESULTS_FILTERS.map((name) => [name, q[name]])));
    const window = offsetWindow(q.offset ?? 0, q.limit ?? DEFAULT_LIMIT);
    if (filter === NONE || window.limit === 0) return [];
    return repo.listEndedEventsByOffset(this.db, filter, { column: order.column, ascending: q.ascending ?? false }, window);
  }

  /** `/events/keyset`: one keyset page and the cursor of the next (null on the last page). */
  async keyset(q: KeysetQuery): Promise<{ rows: CompatEvent[]; nextCursor: string | null }> {
    if (q.offset !== undefined) {
      throw new DomainError('unprocessable', 'offset is not supported on /events/keyset; page with after_cursor (the previous page\'s next_cursor)', [
        { location: 'query', path: 'offset', message: 'not supported here; use after_cursor' },
      ]);
    }
    const order = parseOrderKey(q.order, KEYSET_ORDER_KEYS, 'id');
    const ascending = q.ascending ?? true;
    const cursor = nonEmpty(q.after_cursor);
    const after = cursor === undefined ? undefined : decodeKeysetCursor(order.column, ascending, cursor);
    const filter = await this.sharedFilter(q);
    if (filter === NONE) return { rows: [], nextCursor: null };
    if (nonEmpty(q.game_id) !== undefined || nonEmpty(q.created_by) !== undefined || q.event_week !== undefined || q.parent_event_id !== undefined) {
      return { rows: [], nextCursor: null };
    }
    filter.closed = q.closed ?? false;
    filter.live = q.live;
    const seriesIds = listValues(q.series_id);
    if (seriesIds.length > 0) {
      filter.seriesIds = seriesIds.filter((v) => NUMERIC_ID.test(v));
      if (filter.seriesIds.length === 0) return { rows: [], nextCursor: null };
    }
    const titleSearch = nonEmpty(q.title_search);
    if (titleSearch !== undefined && !canName(titleSearch)) return { rows: [], nextCursor: null };
    if (titleSearch !== undefined) filter.titleLike = containsPattern(titleSearch);
    if (nonEmpty(q.event_date) !== undefined) filter.eventDate = parseDay('event_date', q.event_date!);
    if (nonEmpty(q.start_time_min) !== undefined) filter.startTimeMin = parseDateBound('start_time_min', q.start_time_min!);
    if (nonEmpty(q.start_time_max) !== undefined) filter.startTimeMax = parseDateBound('start_time_max', q.start_time_max!);

    const limit = q.limit ?? DEFAULT_LIMIT;
    const rows = await repo.listEventsByKeyset(this.pools, filter, { column: order.column, ascending }, after, limit + 1);
    if (rows.length <= limit) return { rows, nextCursor: null };
    const page = rows.slice(0, limit);
    return { rows: page, nextCursor: encodeKeysetCursor(order.column, ascending, page[page.length - 1]!) };
  }

  /** `/events/{id}`: by id or ticker. */
  async get(idOrTicker: string): Promise<CompatEventDetail> {
    const row = canName(idOrTicker) ? await repo.findEventDetail(this.db, 'idOrTicker', idOrTicker) : undefined;
    if (!row) throw notFound(`no event '${idOrTicker}'`);
    return row;
  }

  /** `/events/slug/{slug}`: by slug or ticker. */
  async getBySlug(slugOrTicker: string): Promise<CompatEventDetail> {
    const row = canName(slugOrTicker) ? await repo.findEventDetail(this.db, 'slugOrTicker', slugOrTicker) : undefined;
    if (!row) throw notFound(`no event '${slugOrTicker}'`);
    return row;
  }

  async tags(idOrTicker: string): Promise<CompatTag[]> {
    return repo.listEventTags(this.db, await this.eventId(idOrTicker));
  }

  /** No tweet provider is configured: zero for any known event. */
  async tweetCount(idOrTicker: string): Promise<number> {
    await this.eventId(idOrTicker);
    return 0;
  }

  async commentCount(idOrTicker: string): Promise<number> {
    return repo.countVisibleComments(this.db, await this.eventId(idOrTicker));
  }

  private async eventId(idOrTicker: string): Promise<string> {
    const id = canName(idOrTicker) ? await repo.findEventId(this.db, idOrTicker) : undefined;
    if (id === undefined) throw notFound(`no event '${idOrTicker}'`);
    return id;
  }

  /** The shared filters plus the state and the always-empty flags of `/events` and `/events/pagination`. */
  private async listFilter(q: ListQuery): Promise<EventFilter | typeof NONE> {
    if (q.archived === true || q.featured === true || q.cyom === true) return NONE;
    const filter = await this.sharedFilter(q);
    if (filter === NONE) return NONE;
    const active = q.active ?? true;
    const closed = q.closed ?? false;
    if (active && closed) return NONE;
    filter.active = active;
    filter.closed = closed;
    return filter;
  }
}

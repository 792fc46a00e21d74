import type { Db } from '../../db/knex.js';
import * as repo from '../../db/repositories/compat-series.js';
import type { CompatSeriesListQuery, CompatSeriesOrderKey } from '../../db/repositories/compat-series.js';
import type { SeriesRow } from '../../db/tables.js';
import { invalid, notFound } from '../errors.js';
import { offsetWindow } from '../pagination/offset.js';
import { listValues } from '../pagination/lists.js';
import { canName, isId, splitReferences } from './compat-refs.js';
import type { CompatSeriesDetail, CompatSeries, EventDay } from './read-models.js';

export const COMPAT_SERIES_ORDER_KEYS: readonly CompatSeriesOrderKey[] = [
  'id', 'ticker', 'slug', 'title', 'recurrence', 'seriesType', 'updatedAt', 'event_count', 'createdAt',
];

export const COMPAT_SERIES_DEFAULT_LIMIT = 20;
export const COMPAT_SERIES_MAX_LIMIT = 100;

/** The query of `GET /series`, as validated; camelCase aliases beside their snake_case spellings. */
export interface CompatSeriesListParams {
  limit?: number;
  offset?: number;
  recurrence?: string;
  slug?: string[];
  categories_ids?: string[];
  categoriesIds?: string[];
  categories_labels?: string[];
  categoriesLabels?: string[];
  closed?: boolean;
  include_chat?: boolean;
  exclude_events?: boolean;
  order?: string;
  ascending?: boolean;
}

/** A series summary: the series, the distinct start days of its events and the earliest ACTIVE one. */
export interface CompatSeriesSummary {
  series: Pick<CompatSeries, 'id' | 'title' | 'slug'>;
  eventDates: string[];
  eventWeeks: number[];
  earliestOpen: EventDay | undefined;
}

type SeriesKey = { id: string } | { ticker: string } | { slug: string };

/**
 * Compatibility series: the `/series` list, single reads, comment counts
 * and series summaries. Series are recurring templates: never closed, never archived.
 */
export class CompatSeriesService {
  constructor(private readonly db: Db) {}

  async list(params: CompatSeriesListParams): Promise<CompatSeries[]> {
    const order = (params.order ?? 'createdAt') as CompatSeriesOrderKey;
    if (!COMPAT_SERIES_ORDER_KEYS.includes(order)) {
      throw invalid(`order must be one of ${COMPAT_SERIES_ORDER_KEYS.join(', ')}`, [{ location: 'query', path: 'order', message: 'unknown sort key' }]);
    }
    // Series are never closed: asking for closed ones finds none.
    if (params.closed === true) return [];
    const limit = Math.min(params.limit ?? COMPAT_SERIES_DEFAULT_LIMIT, COMPAT_SERIES_MAX_LIMIT);
    const window = offsetWindow(params.offset ?? 0, limit);
    if (window.limit === 0) return [];

    const query: CompatSeriesListQuery = { order, ascending: params.ascending ?? false, offset: window.offset, limit: window.limit };
    // An empty recurrence (`?recurrence=`) filters nothing.
    if (params.recurrence !== undefined && params.recurrence !== '') {
      if (!canName(params.recurrence)) return [];
      query.recurrence = params.recurrence;
    }
    const slugs = listValues(params.slug);
    if (slugs.length > 0) query.series = splitReferences(slugs);
    const categoryIds = listValues(params.categories_ids, params.categoriesIds);
    if (categoryIds.length > 0) {
      const refs = splitReferences(categoryIds);
      query.categoriesById = { ids: refs.ids, slugs: refs.keys };
    }
    const categoryLabels = listValues(params.categories_labels, params.categoriesLabels);
    if (categoryLabels.length > 0) {
      const refs = splitReferences(categoryLabels);
      query.categoriesByLabel = { labels: refs.keys, slugs: refs.keys };
    }
    return repo.listCompatSeries(this.db, query);
  }

  /** One series by id or ticker (an all-digit reference is tried as an id first). */
  async get(reference: string): Promise<CompatSeriesDetail> {
    for (const key of this.idOrTicker(reference)) {
      const row = await repo.findCompatSeries(this.db, key);
      if (row) return row;
    }
    throw notFound(`no series '${reference}'`);
  }

  /** Visible comments across the markets of the series' events; the series by id or ticker. */
  async countComments(reference: string): Promise<number> {
    const series = await this.findRow(reference, this.idOrTicker(reference));
    return repo.countSeriesComments(this.db, series.id);
  }

  /** The summary of the series named by id or ticker. */
  async summaryById(reference: string): Promise<CompatSeriesSummary> {
    return this.summarise(await this.findRow(reference, this.idOrTicker(reference)));
  }

  /** The summary of the series named by slug or ticker. */
  async summaryBySlug(reference: string): Promise<CompatSeriesSummary> {
    const keys: SeriesKey[] = canName(reference) ? [{ slug: reference }, { ticker: reference }] : [];
    return this.summarise(await this.findRow(reference, keys));
  }

  private async summarise(series: SeriesRow): Promise<CompatSeriesSummary> {
    const [days, earliestOpen] = await Promise.all([
      repo.listSeriesEventDays(this.db, series.id),
      repo.findEarliestActiveEventDay(this.db, series.id),
    ]);
    return {
      series,
      eventDates: days.map((d) => d.day),
      // Distinct ISO weeks in the order they first occur (a week number may recur in another year: once).
      eventWeeks: [...new Set(days.map((d) => Number(d.week)))],
      earliestOpen: earliestOpen && { day: earliestOpen.day, week: Number(earliestOpen.week) },
    };
  }

  private idOrTicker(reference: string): SeriesKey[] {
    if (!canName(reference)) return [];
    return isId(reference) ? [{ id: reference }, { ticker: reference }] : [{ ticker: reference }];
  }

  private async findRow(reference: string, keys: SeriesKey[]): Promise<SeriesRow> {
    for (const key of keys) {
      const row = await repo.findSeriesRow(this.db, key);
      if (row) return row;
    }
    throw notFound(`no series '${reference}'`);
  }
}

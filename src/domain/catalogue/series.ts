import type { Db } from '../../db/knex.js';
import * as series from '../../db/repositories/series.js';
import { notFound } from '../errors.js';
import { splitPage } from '../pagination/cursor.js';
import { createdCursor } from './cursors.js';
import { slugKey, tickerKey } from './names.js';
import type { CatalogueSeries } from './read-models.js';

export const SERIES_DEFAULT_LIMIT = 20;

const COLLECTION = 'series';

/** Native series: the cursor list and the single read. */
export class CatalogueSeriesService {
  constructor(private readonly db: Db) {}

  async list(params: { category?: string; limit?: number; cursor?: string }): Promise<{ series: CatalogueSeries[]; cursor: string | null }> {
    const limit = params.limit ?? SERIES_DEFAULT_LIMIT;
    const after = createdCursor.decode(COLLECTION, params.cursor);
    const categorySlug = params.category === undefined ? undefined : slugKey(params.category);
    if (params.category !== undefined && categorySlug === undefined) return { series: [], cursor: null };
    const rows = await series.listSeries(this.db, { categorySlug }, after, limit + 1);
    const { items, hasMore } = splitPage(rows, limit);
    const last = items.at(-1);
    return { series: items, cursor: hasMore && last ? createdCursor.encode(COLLECTION, last.sort_created_at, last.id) : null };
  }

  async get(ticker: string): Promise<CatalogueSeries> {
    const key = tickerKey(ticker);
    const found = key === undefined ? undefined : await series.findSeriesByTicker(this.db, key);
    if (!found) throw notFound(`no series '${ticker}'`);
    return found;
  }
}

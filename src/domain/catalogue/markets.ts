import type { Db } from '../../db/knex.js';
import * as markets from '../../db/repositories/markets.js';
import type { MarketListFilter } from '../../db/repositories/markets.js';
import { notFound } from '../errors.js';
import { splitPage } from '../pagination/cursor.js';
import { listValues } from '../pagination/lists.js';
import { offsetWindow } from '../pagination/offset.js';
import { createdCursor } from './cursors.js';
import { canName, tickerKey } from './names.js';
import type { CatalogueStatus } from '../../db/tables.js';
import type { CatalogueMarket } from './read-models.js';

export const MARKETS_DEFAULT_LIMIT = 20;

export interface MarketListParams {
  page?: number;
  limit?: number;
  cursor?: string;
  event_ticker?: string;
  series_ticker?: string;
  status?: CatalogueStatus;
  ticker?: string[];
  tickers?: string[];
}

export type MarketList =
  | { mode: 'page'; markets: CatalogueMarket[]; total: number; page: number; totalPages: number }
  | { mode: 'cursor'; markets: CatalogueMarket[]; cursor: string | null };

const COLLECTION = 'markets';

/**
 * Native markets: `/api/markets` in page mode
 * or, when `cursor`, `event_ticker` or `series_ticker` is passed, in cursor mode; and the single read.
 */
export class CatalogueMarketService {
  constructor(private readonly db: Db) {}

  async list(params: MarketListParams): Promise<MarketList> {
    const limit = params.limit ?? MARKETS_DEFAULT_LIMIT;
    const cursorMode = params.cursor !== undefined || params.event_ticker !== undefined || params.series_ticker !== undefined;
    const after = cursorMode ? createdCursor.decode(COLLECTION, params.cursor) : undefined;
    const filter = this.filter(params);
    if (cursorMode) {
      if (!filter) return { mode: 'cursor', markets: [], cursor: null };
      const rows = await markets.listMarketsAfter(this.db, filter, after, limit + 1);
      const { items, hasMore } = splitPage(rows, limit);
      const last = items.at(-1);
      return { mode: 'cursor', markets: items, cursor: hasMore && last ? createdCursor.encode(COLLECTION, last.sort_created_at, last.id) : null };
    }
    const page = params.page ?? 1;
    if (!filter) return { mode: 'page', markets: [], total: 0, page, totalPages: 0 };
    const window = offsetWindow((page - 1) * limit, limit);
    const [rows, total] = await Promise.all([
      window.limit > 0 ? markets.listMarketsByOffset(this.db, filter, window) : Promise.resolve([]),
      markets.countMarkets(this.db, filter),
    ]);
    return { mode: 'page', markets: rows, total, page, totalPages: Math.ceil(total / limit) };
  }

  async get(ticker: string): Promise<CatalogueMarket> {
    const key = tickerKey(ticker);
    const market = key === undefined ? undefined : await markets.findMarketByTicker(this.db, key);
    if (!market) throw notFound(`no market '${ticker}'`);
    return market;
  }

  /** The repository filter, or undefined when a value can name nothing (so nothing matches). */
  private filter(params: MarketListParams): MarketListFilter | undefined {
    const filter: MarketListFilter = { status: params.status };
    if (params.event_ticker !== undefined) {
      filter.eventTicker = tickerKey(params.event_ticker);
      if (filter.eventTicker === undefined) return undefined;
    }
    if (params.series_ticker !== undefined) {
      filter.seriesTicker = tickerKey(params.series_ticker);
      if (filter.seriesTicker === undefined) return undefined;
    }
    const tickers = listValues(params.ticker, params.tickers);
    if (tickers.length > 0) {
      const usable = tickers.filter(canName).map((t) => t.toUpperCase());
      if (usable.length === 0) return undefined;
      filter.tickers = usable;
    }
    return filter;
  }
}

import type { Db } from '../../db/knex.js';
import type { ReadPools } from '../../db/pools.js';
import * as events from '../../db/repositories/events.js';
import type { EventAnalyticsRecord } from '../../db/repositories/events.js';
import * as markets from '../../db/repositories/markets.js';
import type { MarketSummaryRecord } from '../../db/repositories/markets.js';
import type { EventRecord } from '../../db/repositories/catalogue.js';
import type { CatalogueStatus } from '../../db/tables.js';
import { notFound } from '../errors.js';
import { splitPage } from '../pagination/cursor.js';
import { tickerKey } from './names.js';
import { createdCursor } from './cursors.js';
import type { CatalogueEvent, EventAnalytics, MarketSummary } from './read-models.js';

export const EVENTS_DEFAULT_LIMIT = 20;

export interface EventListParams {
  series_ticker?: string;
  status?: CatalogueStatus;
  with_nested_markets?: boolean;
  with_analytics?: boolean;
  limit?: number;
  cursor?: string;
}

/** An event with what was asked for: its markets (oldest first) and its analytics. */
export interface EventWithDetails {
  event: CatalogueEvent;
  markets?: MarketSummary[];
  analytics?: EventAnalytics;
}

/** The analytics of an event without markets: nothing counted, nothing summed, no prices. */
export const emptyAnalytics = (eventId: string): EventAnalyticsRecord => ({
  event_id: eventId,
  market_count: 0,
  active_count: 0,
  closed_count: 0,
  resolved_count: 0,
  resolved_yes_count: 0,
  resolved_no_count: 0,
  invalid_count: 0,
  total_volume: '0',
  total_liquidity: '0',
  yes_price_sum: '0',
  avg_yes_price: null,
  min_yes_price: null,
  max_yes_price: null,
});

const COLLECTION = 'events';

/** Native events: the cursor list and the single read. */
export class CatalogueEventService {
  private readonly db: Db;

  /** The page's markets and analytics choose between the pools (src/db/pools.ts plannedOnce). */
  constructor(private readonly pools: ReadPools) {
    this.db = pools.db;
  }

  async list(params: EventListParams): Promise<{ events: EventWithDetails[]; cursor: string | null }> {
    const limit = params.limit ?? EVENTS_DEFAULT_LIMIT;
    const after = createdCursor.decode(COLLECTION, params.cursor);
    const seriesTicker = params.series_ticker === undefined ? undefined : tickerKey(params.series_ticker);
    if (params.series_ticker !== undefined && seriesTicker === undefined) return { events: [], cursor: null };
    const rows = await events.listEvents(this.pools, { seriesTicker, status: params.status }, after, limit + 1);
    const { items, hasMore } = splitPage(rows, limit);
    const details = await this.withDetails(items, { markets: params.with_nested_markets ?? false, analytics: params.with_analytics ?? false });
    const last = items.at(-1);
    return { events: details, cursor: hasMore && last ? createdCursor.encode(COLLECTION, last.sort_created_at, last.id) : null };
  }

  async get(ticker: string, options: { with_nested_markets?: boolean; with_analytics?: boolean }): Promise<EventWithDetails> {
    const key = tickerKey(ticker);
    const event = key === undefined ? undefined : await events.findEventByTicker(this.db, key);
    if (!event) throw notFound(`no event '${ticker}'`);
    const [details] = await this.withDetails([event], { markets: options.with_nested_markets ?? false, analytics: options.with_analytics ?? true });
    return details!;
  }

  /** Markets and analytics of a whole page in one query each (never one per event). */
  private async withDetails(list: EventRecord[], wanted: { markets: boolean; analytics: boolean }): Promise<EventWithDetails[]> {
    const ids = list.map((e) => String(e.id));
    const [marketRows, analyticsRows] = await Promise.all([
      wanted.markets ? markets.listMarketsOfEvents(this.pools, ids) : Promise.resolve([]),
      wanted.analytics ? events.listEventAnalytics(this.pools, ids) : Promise.resolve([]),
    ]);
    const marketsByEvent = new Map<string, MarketSummaryRecord[]>();
    for (const market of marketRows) {
      const key = String(market.event_id);
      const list = marketsByEvent.get(key);
      if (list) list.push(market);
      else marketsByEvent.set(key, [market]);
    }
    const analyticsByEvent = new Map(analyticsRows.map((row) => [String(row.event_id), row]));
    return list.map((event) => {
      const id = String(event.id);
      const out: EventWithDetails = { event };
      if (wanted.markets) out.markets = marketsByEvent.get(id) ?? [];
      if (wanted.analytics) out.analytics = analyticsByEvent.get(id) ?? emptyAnalytics(id);
      return out;
    });
  }
}

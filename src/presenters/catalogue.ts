import type { EventWithDetails } from '../domain/catalogue/events.js';
import type {
  CatalogueEvent,
  CatalogueMarket,
  CatalogueSeries,
  CatalogueTag,
  EventAnalytics,
  MarketSummary,
  RelatedTag,
  SearchHit,
} from '../domain/catalogue/read-models.js';
import type { components } from '../generated/api-types.js';
import { decimal, isoZ, lastPrice } from './format.js';

type Schemas = components['schemas'];

/** Native shapes of the catalogue. */

export const presentTag = (tag: CatalogueTag): Schemas['Tag'] => ({
  id: String(tag.id),
  slug: tag.slug,
  name: tag.label,
  market_count: Number(tag.market_count),
  created_at: isoZ(tag.created_at),
  updated_at: isoZ(tag.updated_at),
});

export const presentSeries = (series: CatalogueSeries): Schemas['Series'] => ({
  id: String(series.id),
  ticker: series.ticker,
  title: series.title,
  categoryId: String(series.category_id),
  category_name: series.category_name,
  category_slug: series.category_slug,
  frequency: series.frequency,
  tags: series.tag_slugs,
  description: series.description,
  event_count: Number(series.event_count),
  createdAt: isoZ(series.created_at),
  updatedAt: isoZ(series.updated_at),
});

export const presentEvent = (event: CatalogueEvent): Schemas['Event'] => ({
  id: String(event.id),
  eventTicker: event.ticker,
  seriesTicker: event.series_ticker,
  title: event.title,
  mutuallyExclusive: event.mutually_exclusive,
  strikeDate: isoZ(event.strike_date),
  description: event.description,
  status: event.status,
  createdAt: isoZ(event.created_at),
  updatedAt: isoZ(event.updated_at),
});

export const presentMarket = (market: CatalogueMarket): Schemas['Market'] => ({
  id: String(market.id),
  ticker: market.ticker,
  eventTicker: market.event_ticker,
  title: market.title,
  status: market.status,
  lastYesPrice: lastPrice(market.last_yes_price),
  lastNoPrice: lastPrice(market.last_no_price),
  volume: decimal(market.volume),
  liquidity: decimal(market.liquidity),
  openInterest: decimal(market.open_interest),
  result: market.result,
  rewardsMinSize: market.rewards_min_size === null ? null : decimal(market.rewards_min_size),
  rewardsMaxSpread: market.rewards_max_spread === null ? null : decimal(market.rewards_max_spread),
  conditionId: market.condition_id,
  yesTokenId: market.yes_token_id,
  noTokenId: market.no_token_id,
  createdAt: isoZ(market.created_at),
  updatedAt: isoZ(market.updated_at),
});

/** The nested market summary of a native event read. */
export const presentMarketSummary = (market: MarketSummary): Schemas['MarketSummary'] => ({
  id: String(market.id),
  ticker: market.ticker,
  eventTicker: market.event_ticker,
  title: market.title,
  status: market.status,
  lastYesPrice: lastPrice(market.last_yes_price),
  lastNoPrice: lastPrice(market.last_no_price),
  volume: decimal(market.volume),
  liquidity: decimal(market.liquidity),
});

/** What the YES-price rollups show when no market of the event has a last YES price. */
const NO_YES_PRICE = '0';
const rollup = (value: string | null): string => (value === null ? NO_YES_PRICE : decimal(value));

/** Event analytics: counts, sums and YES-price rollups over the event's markets. */
export const presentEventAnalytics = (row: EventAnalytics): Schemas['EventAnalytics'] => ({
  marketCount: Number(row.market_count),
  activeCount: Number(row.active_count),
  closedCount: Number(row.closed_count),
  resolvedCount: Number(row.resolved_count),
  unresolvedCount: Number(row.market_count) - Number(row.resolved_count),
  resolvedYesCount: Number(row.resolved_yes_count),
  resolvedNoCount: Number(row.resolved_no_count),
  invalidCount: Number(row.invalid_count),
  totalVolume: decimal(row.total_volume),
  totalLiquidity: decimal(row.total_liquidity),
  yesPriceSum: decimal(row.yes_price_sum),
  avgYesPrice: rollup(row.avg_yes_price),
  minYesPrice: rollup(row.min_yes_price),
  maxYesPrice: rollup(row.max_yes_price),
});

/** One event of `GET /api/events`: the native event, plus its markets and analytics when asked for. */
export const presentEventListItem = (item: EventWithDetails): Schemas['EventListItem'] => {
  // The event's own fields, then the optional ones added to the same object (no copy of a list's items).
  const out: Schemas['EventListItem'] = presentEvent(item.event);
  if (item.markets) out.markets = item.markets.map(presentMarketSummary);
  if (item.analytics) out.analytics = presentEventAnalytics(item.analytics);
  return out;
};

/** `GET /api/events/{event_ticker}`: `{event, markets?, analytics?}`. */
export const presentEventDetail = (item: EventWithDetails): Schemas['EventDetail'] => ({
  event: presentEvent(item.event),
  ...(item.markets ? { markets: item.markets.map(presentMarketSummary) } : {}),
  ...(item.analytics ? { analytics: presentEventAnalytics(item.analytics) } : {}),
});

export const presentRelatedTag = (tag: RelatedTag): Schemas['RelatedTag'] => ({
  id: String(tag.id),
  slug: tag.slug,
  name: tag.label,
  market_count: Number(tag.market_count),
});

const ROUTES: Record<SearchHit['kind'], string> = {
  market: '/markets/',
  event: '/events/',
  series: '/series/',
  tag: '/tags/',
  profile: '/profile/',
};

/** One native search result; `href` is the item's app route. */
export const presentSearchItem = (row: SearchHit): Schemas['SearchItem'] => ({
  kind: row.kind,
  id: String(row.id),
  ticker: row.ticker,
  title: row.title,
  subtitle: row.subtitle,
  href: `${ROUTES[row.kind]}${encodeURIComponent(row.ticker)}`,
});

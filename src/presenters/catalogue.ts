import type { EventView, MarketView, SeriesView, TagView } from '../db/rows.js';
import type { components } from '../generated/api-types.js';
import { decimal, isoZ, nullablePrice } from './format.js';

type Schemas = components['schemas'];

/** Native shapes of the catalogue (specification 2.5, 2.8, 2.9). */

export const presentTag = (tag: TagView): Schemas['Tag'] => ({
  id: String(tag.id),
  slug: tag.slug,
  name: tag.label,
  market_count: Number(tag.market_count),
  created_at: isoZ(tag.created_at),
  updated_at: isoZ(tag.updated_at),
});

export const presentSeries = (series: SeriesView): Schemas['Series'] => ({
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

export const presentEvent = (event: EventView): Schemas['Event'] => ({
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

export const presentMarket = (market: MarketView): Schemas['Market'] => ({
  id: String(market.id),
  ticker: market.ticker,
  eventTicker: market.event_ticker,
  title: market.title,
  status: market.status,
  lastYesPrice: nullablePrice(market.last_yes_price),
  lastNoPrice: nullablePrice(market.last_no_price),
  volume: decimal(market.volume),
  liquidity: decimal(market.liquidity),
  openInterest: decimal(market.open_interest),
  result: market.result,
  rewardsMinSize: market.rewards_min_size === null ? null : decimal(market.rewards_min_size),
  rewardsMaxSpread: market.rewards_max_spread === null ? null : decimal(market.rewards_max_spread),
  createdAt: isoZ(market.created_at),
  updatedAt: isoZ(market.updated_at),
});

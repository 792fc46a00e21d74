import type { CompatSeriesSummary } from '../domain/catalogue/compat-series.js';
import type { PublicSearchResult } from '../domain/catalogue/public-search.js';
import type { CompatSeriesDetail, CompatSeries, CompatTag } from '../domain/catalogue/read-models.js';
import type { components } from '../generated/api-types.js';
import { decimal, isoOffset } from './format.js';

type Schemas = components['schemas'];

/** Compatibility shapes of series, series summaries, tags and search results (docs/compatibility.md). */

export const presentCompatSeries = (series: CompatSeries): Schemas['CompatSeries'] => ({
  id: String(series.id),
  ticker: series.ticker,
  slug: series.slug,
  title: series.title,
  seriesType: series.series_type,
  recurrence: series.frequency,
  description: series.description,
  // Series are recurring templates: never closed.
  active: true,
  closed: false,
  createdAt: isoOffset(series.created_at),
  updatedAt: isoOffset(series.updated_at),
  tags: series.tags.map((t) => ({ id: String(t.id), slug: t.slug, label: t.label })),
});

export const presentCompatSeriesDetail = (series: CompatSeriesDetail): Schemas['CompatSeriesDetail'] => ({
  ...presentCompatSeries(series),
  archived: false,
  commentsEnabled: true,
  volume: decimal(series.volume),
  liquidity: decimal(series.liquidity),
});

export const presentCompatSeriesSummary = (summary: CompatSeriesSummary): Schemas['CompatSeriesSummary'] => ({
  id: String(summary.series.id),
  title: summary.series.title,
  slug: summary.series.slug,
  eventDates: summary.eventDates,
  eventWeeks: summary.eventWeeks,
  earliest_open_week: summary.earliestOpen?.week ?? null,
  earliest_open_date: summary.earliestOpen?.day ?? null,
});

export const presentCompatTag = (tag: CompatTag): Schemas['CompatTag'] => ({
  id: String(tag.id),
  slug: tag.slug,
  label: tag.label,
  forceShow: tag.force_show,
  forceHide: tag.force_hide,
  isCarousel: tag.is_carousel,
  publishedAt: isoOffset(tag.published_at),
  createdAt: isoOffset(tag.created_at),
  updatedAt: isoOffset(tag.updated_at),
  createdBy: tag.created_by ?? 0,
  updatedBy: tag.updated_by ?? 0,
  activeEventsCount: Number(tag.active_events_count),
});

export const presentPublicSearch = (result: PublicSearchResult): Schemas['PublicSearchResult'] => ({
  events: result.events.map((e) => ({
    id: String(e.id),
    ticker: e.ticker,
    slug: e.slug,
    title: e.title,
    subtitle: e.series_title,
    active: e.status === 'ACTIVE',
    commentsEnabled: true,
  })),
  tags: result.tags.map((t) => ({ id: t.id, slug: t.slug, label: t.label })),
  profiles: result.profiles.map((p) => ({ id: p.id, name: p.name, pseudonym: p.username, displayUsernamePublic: true })),
  pagination: { hasMore: result.hasMore, totalResults: result.totalResults },
});

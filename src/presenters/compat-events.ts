import type { CompatEventDetail, CompatEvent, EventCreator } from '../domain/catalogue/read-models.js';
import type { components } from '../generated/api-types.js';
import { presentEventAnalytics } from './catalogue.js';
import { decimal, isoOffset, utcDay } from './format.js';

type Schemas = components['schemas'];

/**
 * Compatibility shapes of events (the fields of each endpoint) and event creators; docs/compatibility.md says
 * which public API they follow.
 * Timestamps carry `+00:00`; ids are strings; money is decimal strings.
 */

export const presentCompatEventListItem = (e: CompatEvent): Schemas['CompatEventListItem'] => ({
  id: String(e.id),
  ticker: e.ticker,
  slug: e.slug,
  title: e.title,
  description: e.description,
  startDate: isoOffset(e.start_date),
  creationDate: isoOffset(e.created_at),
  endDate: isoOffset(e.strike_date),
  active: e.status === 'ACTIVE',
  closed: e.status !== 'ACTIVE',
  archived: false,
  commentsEnabled: true,
  enableOrderBook: true,
  negRisk: e.mutually_exclusive,
  enableNegRisk: e.mutually_exclusive,
  eventDate: utcDay(e.start_date),
  seriesSlug: e.series_slug,
  live: e.live,
  ended: e.ended,
});

/** The list item's fields, then the detail's own (added to the same object, in this order). */
export const presentCompatEvent = (e: CompatEventDetail): Schemas['CompatEvent'] =>
  Object.assign(presentCompatEventListItem(e), {
    startTime: isoOffset(e.start_date),
    createdAt: isoOffset(e.created_at),
    updatedAt: isoOffset(e.updated_at),
    liquidity: decimal(e.liquidity),
    volume: decimal(e.volume),
    openInterest: decimal(e.open_interest),
    liquidityClob: decimal(e.liquidity),
    series: [{ id: String(e.series_id), ticker: e.series_ticker, slug: e.series_slug, title: e.series_title, active: true, closed: false, archived: false }],
    analytics: presentEventAnalytics(e),
  });

export const presentCompatEventBySlug = (e: CompatEventDetail): Schemas['CompatEventBySlug'] => ({
  id: String(e.id),
  ticker: e.ticker,
  slug: e.slug,
  title: e.title,
  description: e.description,
  active: e.status === 'ACTIVE',
  closed: e.status !== 'ACTIVE',
  commentsEnabled: true,
  enableOrderBook: true,
  negRisk: e.mutually_exclusive,
  seriesSlug: e.series_slug,
  live: e.live,
  ended: e.ended,
  liquidity: decimal(e.liquidity),
  volume: decimal(e.volume),
  openInterest: decimal(e.open_interest),
  analytics: presentEventAnalytics(e),
});

export const presentCompatEventKeysetItem = (e: CompatEvent): Schemas['CompatEventKeysetItem'] => ({
  id: String(e.id),
  ticker: e.ticker,
  slug: e.slug,
  title: e.title,
  description: e.description,
  startDate: isoOffset(e.start_date),
  endDate: isoOffset(e.strike_date),
  createdAt: isoOffset(e.created_at),
  updatedAt: isoOffset(e.updated_at),
  active: e.status === 'ACTIVE',
  closed: e.status !== 'ACTIVE',
  enableOrderBook: true,
  negRisk: e.mutually_exclusive,
  seriesSlug: e.series_slug,
});

export const presentCompatEventPaginationItem = (e: CompatEvent): Schemas['CompatEventPaginationItem'] => ({
  id: String(e.id),
  ticker: e.ticker,
  slug: e.slug,
  title: e.title,
  active: e.status === 'ACTIVE',
  closed: e.status !== 'ACTIVE',
  ended: e.ended,
});

/** A resolved or ended event; an ACTIVE one past its strike time closed at its strike time. */
export const presentCompatEventResult = (e: CompatEvent): Schemas['CompatEventResult'] =>
  Object.assign(presentCompatEventPaginationItem(e), { closedTime: isoOffset(e.closed_time ?? e.strike_date) });

export const presentEventCreator = (c: EventCreator): Schemas['EventCreator'] => ({
  id: c.id,
  creatorName: c.name || c.username,
  creatorHandle: c.username,
  creatorUrl: `/profile/${encodeURIComponent(c.username)}`,
  creatorImage: c.avatar_url,
  createdAt: isoOffset(c.created_at),
  updatedAt: isoOffset(c.updated_at),
});

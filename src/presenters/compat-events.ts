import type { CompatEventDetailRow, CompatEventRow } from '../db/repositories/compat-events.js';
import type { CreatorRow } from '../db/repositories/creators.js';
import type { components } from '../generated/api-types.js';
import { presentEventAnalytics } from './catalogue.js';
import { decimal, isoOffset, utcDay } from './format.js';

type Schemas = components['schemas'];

/**
 * Compatibility shapes of events (specification 2.6: the fields of each endpoint) and event creators (2.7).
 * Timestamps carry `+00:00`; ids are strings; money is decimal strings.
 */

const identity = (e: CompatEventRow) => ({ id: String(e.id), ticker: e.ticker, slug: e.slug, title: e.title });
const state = (e: CompatEventRow) => ({ active: e.status === 'ACTIVE', closed: e.status !== 'ACTIVE' });

export const presentCompatEventListItem = (e: CompatEventRow): Schemas['CompatEventListItem'] => ({
  ...identity(e),
  description: e.description,
  startDate: isoOffset(e.start_date),
  creationDate: isoOffset(e.created_at),
  endDate: isoOffset(e.strike_date),
  ...state(e),
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

const money = (e: CompatEventRow) => ({ liquidity: decimal(e.liquidity), volume: decimal(e.volume), openInterest: decimal(e.open_interest) });

export const presentCompatEvent = (e: CompatEventDetailRow): Schemas['CompatEvent'] => ({
  ...presentCompatEventListItem(e),
  startTime: isoOffset(e.start_date),
  createdAt: isoOffset(e.created_at),
  updatedAt: isoOffset(e.updated_at),
  ...money(e),
  liquidityClob: decimal(e.liquidity),
  series: [{ id: String(e.series_id), ticker: e.series_ticker, slug: e.series_slug, title: e.series_title, active: true, closed: false, archived: false }],
  analytics: presentEventAnalytics(e),
});

export const presentCompatEventBySlug = (e: CompatEventDetailRow): Schemas['CompatEventBySlug'] => ({
  ...identity(e),
  description: e.description,
  ...state(e),
  commentsEnabled: true,
  enableOrderBook: true,
  negRisk: e.mutually_exclusive,
  seriesSlug: e.series_slug,
  live: e.live,
  ended: e.ended,
  ...money(e),
  analytics: presentEventAnalytics(e),
});

export const presentCompatEventKeysetItem = (e: CompatEventRow): Schemas['CompatEventKeysetItem'] => ({
  ...identity(e),
  description: e.description,
  startDate: isoOffset(e.start_date),
  endDate: isoOffset(e.strike_date),
  createdAt: isoOffset(e.created_at),
  updatedAt: isoOffset(e.updated_at),
  ...state(e),
  enableOrderBook: true,
  negRisk: e.mutually_exclusive,
  seriesSlug: e.series_slug,
});

export const presentCompatEventPaginationItem = (e: CompatEventRow): Schemas['CompatEventPaginationItem'] => ({
  ...identity(e),
  ...state(e),
  ended: e.ended,
});

/** A resolved or ended event; an ACTIVE one past its strike time closed at its strike time. */
export const presentCompatEventResult = (e: CompatEventRow): Schemas['CompatEventResult'] => ({
  ...identity(e),
  ...state(e),
  ended: e.ended,
  closedTime: isoOffset(e.closed_time ?? e.strike_date),
});

export const presentEventCreator = (c: CreatorRow): Schemas['EventCreator'] => ({
  id: c.id,
  creatorName: c.name || c.username,
  creatorHandle: c.username,
  creatorUrl: `/profile/${encodeURIComponent(c.username)}`,
  creatorImage: c.avatar_url,
  createdAt: isoOffset(c.created_at),
  updatedAt: isoOffset(c.updated_at),
});

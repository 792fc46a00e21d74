/**
 * What the catalogue's reads return, and all that the presenters may read of them. Each lists the fields
 * the API shows, under their stored names; the repositories' rows carry them (and sometimes more), which the
 * compiler checks where a service returns a row as one of these. So a wire shape depends on the domain only,
 * and a change of storage that drops a field the API shows fails to compile in the service, not in a presenter.
 *
 * Money and counts are decimal strings as PostgreSQL returns them; counts of rows may arrive as numbers or
 * numeric strings, and the presenters convert them.
 */

export type CatalogueStatus = 'ACTIVE' | 'CLOSED' | 'RESOLVED';
export type MarketResult = 'yes' | 'no' | 'invalid';

/** A native tag with the number of markets carrying it. */
export interface CatalogueTag {
  id: string;
  slug: string;
  label: string;
  market_count: number;
  created_at: Date;
  updated_at: Date;
}

/** A tag co-occurring with another on the same markets. */
export interface RelatedTag {
  id: string;
  slug: string;
  label: string;
  market_count: number;
}

/** A native series with its category, tag slugs and number of events. */
export interface CatalogueSeries {
  id: string;
  ticker: string;
  title: string;
  category_id: string;
  category_name: string;
  category_slug: string;
  frequency: string;
  tag_slugs: string[];
  description: string;
  event_count: number;
  created_at: Date;
  updated_at: Date;
}

/** A native event with its series' ticker. */
export interface CatalogueEvent {
  id: string;
  ticker: string;
  series_ticker: string;
  title: string;
  mutually_exclusive: boolean;
  strike_date: Date;
  description: string;
  status: CatalogueStatus;
  created_at: Date;
  updated_at: Date;
}

/** The market fields shown inside an event read. */
export interface MarketSummary {
  id: string;
  ticker: string;
  event_ticker: string;
  title: string;
  status: CatalogueStatus;
  last_yes_price: string | null;
  last_no_price: string | null;
  volume: string;
  liquidity: string;
}

/** A native market with its event's ticker, figures and reward settings. */
export interface CatalogueMarket extends MarketSummary {
  open_interest: string;
  result: MarketResult | null;
  rewards_min_size: string | null;
  rewards_max_spread: string | null;
  /** Order-book identifiers: condition id and outcome token ids. */
  condition_id: string;
  yes_token_id: string;
  no_token_id: string;
  created_at: Date;
  updated_at: Date;
}

/** Counts, sums and YES-price rollups over the markets of one event. */
export interface EventAnalytics {
  market_count: number;
  active_count: number;
  closed_count: number;
  resolved_count: number;
  resolved_yes_count: number;
  resolved_no_count: number;
  invalid_count: number;
  total_volume: string;
  total_liquidity: string;
  yes_price_sum: string;
  /** Null when no market of the event has a last YES price. */
  avg_yes_price: string | null;
  min_yes_price: string | null;
  max_yes_price: string | null;
}

export type SearchKind = 'market' | 'event' | 'series' | 'tag' | 'profile';

/** One result of the native search. */
export interface SearchHit {
  kind: SearchKind;
  id: string;
  ticker: string;
  title: string;
  subtitle: string;
}

/** An event as the compatibility lists show it. */
export interface CompatEventRecord {
  id: string;
  ticker: string;
  slug: string;
  title: string;
  description: string;
  mutually_exclusive: boolean;
  status: CatalogueStatus;
  start_date: Date;
  strike_date: Date;
  closed_time: Date | null;
  volume: string;
  liquidity: string;
  open_interest: string;
  created_at: Date;
  updated_at: Date;
  series_id: string;
  series_ticker: string;
  series_slug: string;
  series_title: string;
  /** ACTIVE, started and before its strike time. */
  live: boolean;
  /** Its strike time has passed or it is not ACTIVE. */
  ended: boolean;
}

/** An event as the compatibility single reads show it: with its analytics. */
export type CompatEventDetailRecord = CompatEventRecord & EventAnalytics;

/** A tag as it appears inside compatibility series and search results. */
export interface CompatTagRef {
  id: string;
  slug: string;
  label: string;
}

/** A tag in the compatibility shape: its stored flags and the ACTIVE events carrying it. */
export interface CompatTagRecord extends CompatTagRef {
  force_show: boolean;
  force_hide: boolean;
  is_carousel: boolean;
  created_by: number | null;
  updated_by: number | null;
  published_at: Date;
  created_at: Date;
  updated_at: Date;
  active_events_count: number;
}

/** A series as the compatibility list shows it. */
export interface CompatSeriesRecord {
  id: string;
  ticker: string;
  slug: string;
  title: string;
  series_type: string;
  frequency: string;
  description: string;
  created_at: Date;
  updated_at: Date;
  tags: CompatTagRef[];
}

/** A series as the compatibility single read shows it: with the sums over its events. */
export interface CompatSeriesDetailRecord extends CompatSeriesRecord {
  volume: string;
  liquidity: string;
}

/** A UTC day of an event's start time (`YYYY-MM-DD`) and its ISO week. */
export interface EventDay {
  day: string;
  week: number;
}

/** An account that created at least one event. */
export interface EventCreatorRecord {
  id: string;
  name: string;
  username: string;
  avatar_url: string | null;
  created_at: Date;
  updated_at: Date;
}

/** The buckets of a compatibility search. */
export interface PublicSearchEventHit {
  id: string;
  ticker: string;
  slug: string;
  title: string;
  status: CatalogueStatus;
  series_title: string;
}

export interface PublicSearchProfileHit {
  id: string;
  name: string;
  username: string;
}

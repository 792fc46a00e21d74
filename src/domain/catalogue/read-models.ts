import type { TagRecord, SeriesRecord, EventRecord, MarketRecord } from '../../db/repositories/catalogue.js';
import type { CompatEventRecord } from '../../db/repositories/compat-events.js';
import type { CompatSeriesDetailRecord, CompatSeriesRecord, CompatTagRefRecord, EventDayRecord } from '../../db/repositories/compat-series.js';
import type { CompatTagRecord } from '../../db/repositories/compat-tags.js';
import type { CreatorRecord } from '../../db/repositories/creators.js';
import type { EventAnalyticsRecord } from '../../db/repositories/events.js';
import type { SearchEventRecord, SearchProfileRecord } from '../../db/repositories/public-search.js';
import type { SearchHitRecord } from '../../db/repositories/search.js';
import type { RelatedTagRecord } from '../../db/repositories/tags.js';

/**
 * What the catalogue's reads return, and all that the presenters may read of them: each picks the fields the
 * API shows from the repository's record (or is that record, when the API shows all of it), under their
 * stored names. So a wire shape depends on the domain only, and a change of storage that drops a field the
 * API shows fails to compile here, not in a presenter.
 *
 * Money and counts are decimal strings as PostgreSQL returns them; counts of rows may arrive as numbers or
 * numeric strings, and the presenters convert them.
 */

/** A native tag with the number of markets carrying it. */
export type CatalogueTag = Pick<TagRecord, 'id' | 'slug' | 'label' | 'market_count' | 'created_at' | 'updated_at'>;

/** A tag co-occurring with another on the same markets. */
export type RelatedTag = Pick<RelatedTagRecord, 'id' | 'slug' | 'label' | 'market_count'>;

/** A native series with its category, tag slugs and number of events. */
export type CatalogueSeries = Pick<
  SeriesRecord,
  'id' | 'ticker' | 'title' | 'category_id' | 'category_name' | 'category_slug' | 'frequency' | 'tag_slugs' | 'description' | 'event_count' | 'created_at' | 'updated_at'
>;

/** A native event with its series' ticker. */
export type CatalogueEvent = Pick<
  EventRecord,
  'id' | 'ticker' | 'series_ticker' | 'title' | 'mutually_exclusive' | 'strike_date' | 'description' | 'status' | 'created_at' | 'updated_at'
>;

/** The market fields shown inside an event read. */
export type MarketSummary = Pick<MarketRecord, 'id' | 'ticker' | 'event_ticker' | 'title' | 'status' | 'last_yes_price' | 'last_no_price' | 'volume' | 'liquidity'>;

/** A native market with its event's ticker, figures and reward settings. */
export type CatalogueMarket = MarketSummary & Pick<MarketRecord, 'open_interest' | 'result' | 'rewards_min_size' | 'rewards_max_spread' | 'condition_id' | 'yes_token_id' | 'no_token_id' | 'created_at' | 'updated_at'>;

/** Counts, sums and YES-price rollups over the markets of one event (the averages null when no market has a last YES price). */
export type EventAnalytics = Omit<EventAnalyticsRecord, 'event_id'>;

/** One result of the native search. */
export type SearchHit = SearchHitRecord;

/** An event as the compatibility lists show it (`live`: ACTIVE, started and before its strike time; `ended`: past it, or not ACTIVE). */
export type CompatEvent = CompatEventRecord;

/** An event as the compatibility single reads show it: with its analytics. */
export type CompatEventDetail = CompatEvent & EventAnalytics;

/** A tag as it appears inside compatibility series and search results. */
export type CompatTagRef = CompatTagRefRecord;

/** A tag in the compatibility shape: its stored flags and the ACTIVE events carrying it. */
export type CompatTag = CompatTagRecord;

/** A series as the compatibility list shows it. */
export type CompatSeries = Omit<CompatSeriesRecord, 'category_id'>;

/** A series as the compatibility single read shows it: with the sums over its events. */
export type CompatSeriesDetail = CompatSeries & Pick<CompatSeriesDetailRecord, 'volume' | 'liquidity'>;

/** A UTC day of an event's start time (`YYYY-MM-DD`) and its ISO week. */
export type EventDay = EventDayRecord;

/** An account that created at least one event. */
export type EventCreator = CreatorRecord;

/** The buckets of a compatibility search. */
export type PublicSearchEventHit = SearchEventRecord;
export type PublicSearchProfileHit = SearchProfileRecord;

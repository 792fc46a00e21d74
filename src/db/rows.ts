import type { BalancesRow } from './tables.js';

/** Row types of the tables, as pg returns them (numeric columns as strings, never floats). */

export type Role = 'USER' | 'ADMIN';

export interface UserRow {
  id: string;
  email: string;
  username: string;
  name: string;
  /** Null: an account signed in through a provider, with no password. */
  password_hash: string | null;
  role: Role;
  created_at: Date;
  updated_at: Date;
}

export type UserWithBalanceRow = UserRow & Pick<BalancesRow, 'cash' | 'reserved'> & { position_created_at: string };

export type CatalogueStatus = 'ACTIVE' | 'CLOSED' | 'RESOLVED';
export type MarketResult = 'yes' | 'no' | 'invalid';

export interface TagRow {
  id: string;
  slug: string;
  label: string;
  force_show: boolean;
  force_hide: boolean;
  is_carousel: boolean;
  created_by: number | null;
  updated_by: number | null;
  published_at: Date;
  created_at: Date;
  updated_at: Date;
}

export interface CategoryRow {
  id: string;
  slug: string;
  name: string;
}

export interface SeriesRow {
  id: string;
  ticker: string;
  slug: string;
  title: string;
  category_id: string;
  frequency: string;
  series_type: string;
  description: string;
  created_at: Date;
  updated_at: Date;
}

export interface EventRow {
  id: string;
  ticker: string;
  slug: string;
  series_id: string;
  title: string;
  description: string;
  mutually_exclusive: boolean;
  status: CatalogueStatus;
  creator_id: string | null;
  start_date: Date;
  strike_date: Date;
  closed_time: Date | null;
  volume: string;
  liquidity: string;
  open_interest: string;
  created_at: Date;
  updated_at: Date;
}

export interface MarketRow {
  id: string;
  ticker: string;
  event_id: string;
  title: string;
  status: CatalogueStatus;
  result: MarketResult | null;
  last_yes_price: string | null;
  last_no_price: string | null;
  volume: string;
  liquidity: string;
  open_interest: string;
  rewards_min_size: string | null;
  rewards_max_spread: string | null;
  /** Order-book identifiers (migration 0031): 0x and 64 hex digits; decimal uint256 text. */
  condition_id: string;
  yes_token_id: string;
  no_token_id: string;
  closed_at: Date | null;
  resolved_at: Date | null;
  created_at: Date;
  updated_at: Date;
}

/** A series with its category, tag slugs and number of events. */
export interface SeriesView extends SeriesRow {
  category_slug: string;
  category_name: string;
  tag_slugs: string[];
  event_count: number;
}

/** An event with its series' ticker and slug. */
export interface EventView extends EventRow {
  series_ticker: string;
  series_slug: string;
}

/** A market with its event's ticker. */
export interface MarketView extends MarketRow {
  event_ticker: string;
}

/** A tag with the number of markets carrying it. */
export interface TagView extends TagRow {
  market_count: number;
}

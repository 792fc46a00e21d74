import type { Knex } from 'knex';
import * as m0001 from './0001_create_accounts.js';
import * as m0002 from './0002_create_catalogue.js';
import * as m0003 from './0003_native_catalogue_reads.js';
import * as m0004 from './0004_public_search_indexes.js';
import * as m0005 from './0005_tag_active_event_counts.js';
import * as m0006 from './0006_compat_event_orderings.js';
import * as m0007 from './0007_event_text_bounds.js';
import * as m0008 from './0008_create_trading.js';
import * as m0009 from './0009_create_order_sessions.js';
import * as m0010 from './0010_create_feed_events.js';
import * as m0011 from './0011_feed_append_without_notify.js';
import * as m0012 from './0012_placement_begin.js';
import * as m0013 from './0013_feed_records_of_many_writes.js';
import * as m0014 from './0014_placements_begin.js';
import * as m0015 from './0015_session_change_notifications.js';
import * as m0016 from './0016_drop_feed_append.js';
import * as m0017 from './0017_word_search.js';
import * as m0019 from './0019_external_identities.js';
import * as m0020 from './0020_function_bodies_from_files.js';
import * as m0021 from './0021_api_keys.js';
import * as m0022 from './0022_feed_records_returned.js';
import * as m0023 from './0023_search_changes.js';
import * as m0024 from './0024_event_status_counts.js';
import * as m0025 from './0025_feed_events_as_one_document.js';
import * as m0026 from './0026_feed_events_uncompressed.js';
import * as m0027 from './0027_search_words_without_symbols.js';
import * as m0028 from './0028_builder_code_check_without_regex.js';
import * as m0029 from './0029_trading_records_without_foreign_keys.js';
import * as m0030 from './0030_market_candles.js';
import * as m0031 from './0031_outcome_tokens.js';
import * as m0032 from './0032_candles_from_trade_tape.js';

/**
 * Every migration, in order. A static list (not a folder scan) so that it works the same under tsx,
 * vitest and a compiled build. Migrations are never edited once they have landed: add a new one.
 */
export const migrations: ReadonlyArray<{ name: string; migration: Knex.Migration }> = [
  { name: '0001_create_accounts', migration: m0001 },
  { name: '0002_create_catalogue', migration: m0002 },
  { name: '0003_native_catalogue_reads', migration: m0003 },
  { name: '0004_public_search_indexes', migration: m0004 },
  { name: '0005_tag_active_event_counts', migration: m0005 },
  { name: '0006_compat_event_orderings', migration: m0006 },
  { name: '0007_event_text_bounds', migration: m0007 },
  { name: '0008_create_trading', migration: m0008 },
  { name: '0009_create_order_sessions', migration: m0009 },
  { name: '0010_create_feed_events', migration: m0010 },
  { name: '0011_feed_append_without_notify', migration: m0011 },
  { name: '0012_placement_begin', migration: m0012 },
  { name: '0013_feed_records_of_many_writes', migration: m0013 },
  { name: '0014_placements_begin', migration: m0014 },
  { name: '0015_session_change_notifications', migration: m0015 },
  { name: '0016_drop_feed_append', migration: m0016 },
  { name: '0017_word_search', migration: m0017 },
  { name: '0019_external_identities', migration: m0019 },
  { name: '0020_function_bodies_from_files', migration: m0020 },
  { name: '0021_api_keys', migration: m0021 },
  { name: '0022_feed_records_returned', migration: m0022 },
  { name: '0023_search_changes', migration: m0023 },
  { name: '0024_event_status_counts', migration: m0024 },
  { name: '0025_feed_events_as_one_document', migration: m0025 },
  { name: '0026_feed_events_uncompressed', migration: m0026 },
  { name: '0027_search_words_without_symbols', migration: m0027 },
  { name: '0028_builder_code_check_without_regex', migration: m0028 },
  { name: '0029_trading_records_without_foreign_keys', migration: m0029 },
  { name: '0030_market_candles', migration: m0030 },
  { name: '0031_outcome_tokens', migration: m0031 },
  { name: '0032_candles_from_trade_tape', migration: m0032 },
];

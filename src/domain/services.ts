import type { AccountService } from './accounts/service.js';
import type { ApiKeyService } from './api-keys/service.js';
import type { CatalogueAdminService } from './catalogue/admin.js';
import type { ClobService } from './clob/service.js';
import type { CompatEventService } from './catalogue/compat-events.js';
import type { CompatSeriesService } from './catalogue/compat-series.js';
import type { CompatTagService } from './catalogue/compat-tags.js';
import type { EventCreatorService } from './catalogue/creators.js';
import type { CatalogueEventService } from './catalogue/events.js';
import type { LiveSearchIndex } from './catalogue/live-search-index.js';
import type { CatalogueMarketService } from './catalogue/markets.js';
import type { PublicSearchService } from './catalogue/public-search.js';
import type { CatalogueSearchService } from './catalogue/search.js';
import type { CatalogueSeriesService } from './catalogue/series.js';
import type { CatalogueTagService } from './catalogue/tags.js';
import type { FeedService } from './feed/service.js';
import type { OrderSessionService } from './sessions/service.js';
import type { SystemService } from './system/service.js';
import type { TradingService } from './trading/service.js';

/** The domain services handlers call; one set per process. */
export interface Services {
  accounts: AccountService;
  /** API keys of accounts and the signed requests made with them. */
  apiKeys: ApiKeyService;
  system: SystemService;
  catalogueAdmin: CatalogueAdminService;
  /** Orders, portfolio and market data; catalogue administration and order sessions open its `transactions`. */
  trading: TradingService;
  /** Order sessions (heartbeat, expiry of sessions) and order scoring. */
  sessions: OrderSessionService;
  /** The order-book (CLOB) client's market data, order views and signed orders, over trading. */
  clob: ClobService;
  // --- catalogue read services ---
  catalogueEvents: CatalogueEventService;
  catalogueSeries: CatalogueSeriesService;
  catalogueTags: CatalogueTagService;
  catalogueMarkets: CatalogueMarketService;
  /** The word index both searches read, kept current with the database. */
  searchIndex: LiveSearchIndex;
  catalogueSearch: CatalogueSearchService;
  compatEvents: CompatEventService;
  eventCreators: EventCreatorService;
  compatSeries: CompatSeriesService;
  compatTags: CompatTagService;
  publicSearch: PublicSearchService;
  /** The bundled OpenAPI document, served at /openapi.json. */
  document: object;
  /** The real-time feed of this process (its WebSocket transport: src/realtime/). */
  feed: FeedService;
  /** The AsyncAPI document of the real-time feed, served at /asyncapi.json. */
  asyncapi: object;
}

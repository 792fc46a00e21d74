import type { Config } from './config.js';
import type { Pools } from './db/pools.js';
import { OidcProvider } from './domain/accounts/oidc.js';
import { AccountService } from './domain/accounts/service.js';
import { ApiKeyService } from './domain/api-keys/service.js';
import type { SecretBox } from './domain/api-keys/secret-box.js';
import { CatalogueAdminService } from './domain/catalogue/admin.js';
import { SystemService } from './domain/system/service.js';
import { TradingService } from './domain/trading/service.js';
import { ClobService } from './domain/clob/service.js';
import type { TradingActivity } from './domain/trading/transaction.js';
import { FeedService, type FeedOptions } from './domain/feed/service.js';
import { OrderSessionService } from './domain/sessions/service.js';
import { CatalogueEventService } from './domain/catalogue/events.js';
import { CatalogueMarketService } from './domain/catalogue/markets.js';
import { LiveSearchIndex } from './domain/catalogue/live-search-index.js';
import { CatalogueSearchService } from './domain/catalogue/search.js';
import { CatalogueSeriesService } from './domain/catalogue/series.js';
import { CatalogueTagService } from './domain/catalogue/tags.js';
import { CompatEventService } from './domain/catalogue/compat-events.js';
import { EventCreatorService } from './domain/catalogue/creators.js';
import { CompatSeriesService } from './domain/catalogue/compat-series.js';
import { CompatTagService } from './domain/catalogue/compat-tags.js';
import { PublicSearchService } from './domain/catalogue/public-search.js';
import type { Services } from './domain/services.js';

// The entry point's type for what createServices builds (the benchmarks and tests name it from here).
export type { Services };

/** Optional parts of createServices: the AsyncAPI document, the feed's settings, and where work off the request path reports errors. */
export interface ServiceExtras {
  asyncapi?: object;
  feed?: FeedOptions;
  onBackgroundError?: (error: unknown, context: string) => void;
  /** Told what committed trading work did (metrics). */
  tradingActivity?: TradingActivity;
  /** Seals order-book secrets, or why they cannot be issued (src/api-key-secrets.ts); by default that reason. */
  apiKeySecrets?: SecretBox | string;
}

/** Each search reads through its own pool (src/server.ts), the rest of the service through `db`. */
export function createServices(pools: Pools, config: Config, document: object, extras: ServiceExtras = {}): Services {
  const { db, publicSearchDb, catalogueSearchDb } = pools;
  const onError = extras.onBackgroundError;
  const accounts = new AccountService(
    db,
    {
      startingBalance: config.startingBalance,
      tokenTtlSecs: config.tokenTtlSecs,
      identityProvider: config.oidc ? new OidcProvider(config.oidc) : undefined,
      login: config.abuse.login,
      passwordHashing: config.abuse.passwordHashing,
    },
    onError && ((error) => onError(error, 'session listener')),
  );
  const apiKeys = new ApiKeyService(
    db,
    accounts,
    {
      windowSecs: config.apiKeys.windowSecs,
      secrets: extras.apiKeySecrets ?? 'order-book credentials are not configured on this service',
      ...(config.abuse.rateLimits && { generationBudget: config.abuse.keyGeneration }),
    },
    onError && ((error) => onError(error, 'API keys')),
  );
  const feed = new FeedService(
    db,
    {
      authenticate: (token) => accounts.authenticate(token),
      onSessionChange: (listener) => accounts.onSessionChange(listener),
      accountOfKey: (keyId) => apiKeys.accountOf(keyId),
    },
    onError,
    {
      ...extras.feed,
      limits: { maxSubscriptions: config.abuse.realtime.maxSubscriptions, ...extras.feed?.limits },
    },
  );
  const trading = new TradingService(db, {
    ...(onError ? { onFeedNotifyError: (error: unknown) => onError(error, 'feed notification') } : {}),
    // Committed records go to this process's subscribers at once; other processes read them when notified.
    publishFeedRecords: (records) => feed.committed(records),
    activity: extras.tradingActivity,
  });
  // One per process, read by both searches; read whole from the main pool, not the searches' own.
  const searchIndex = new LiveSearchIndex(db, onError && ((error) => onError(error, 'search index')));
  return {
    accounts,
    apiKeys,
    system: new SystemService(db),
    catalogueAdmin: new CatalogueAdminService(db, trading.transactions),
    trading,
    sessions: new OrderSessionService(db, trading.transactions, { timeoutSecs: config.heartbeatTimeoutSecs }),
    clob: new ClobService(db, trading, apiKeys),
    // --- catalogue read services ---
    catalogueEvents: new CatalogueEventService(pools),
    catalogueSeries: new CatalogueSeriesService(db),
    catalogueTags: new CatalogueTagService(db),
    catalogueMarkets: new CatalogueMarketService(db),
    searchIndex,
    catalogueSearch: new CatalogueSearchService(catalogueSearchDb, searchIndex),
    compatEvents: new CompatEventService(pools),
    eventCreators: new EventCreatorService(db),
    compatSeries: new CompatSeriesService(db),
    compatTags: new CompatTagService(db),
    publicSearch: new PublicSearchService(publicSearchDb, searchIndex),
    document,
    feed,
    asyncapi: extras.asyncapi ?? {},
  };
}

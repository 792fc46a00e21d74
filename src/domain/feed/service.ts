import type { Db } from '../../db/knex.js';
import { Listener } from '../../db/listener.js';
import * as repo from '../../db/repositories/feed.js';
import type { Account } from '../accounts/service.js';
import { FeedHub } from './hub.js';
import { PublishedRecord } from './messages.js';
import { FeedRelay } from './relay.js';
import { DEFAULT_LIMITS, FeedSession, type Connection, type FeedLimits } from './session.js';

/** Settings of the feed (defaults: what `npm start` uses). */
export interface FeedOptions {
  limits?: Partial<FeedLimits>;
  /** How long records are kept (default 600 s): a listener that lost its connection catches up within it. */
  retentionSecs?: number;
  /** How often records are pruned (default 60 s). */
  pruneIntervalMs?: number;
}

/**
 * The real-time feed of one process: trading transactions write outbox records (repo.appendFeedRecords,
 * called by TradingService), which the process that committed them NOTIFYs (repo.FeedNotifier); every
 * process's listener reads them in order per market (FeedRelay) and fans them out to the subscriptions of its
 * connections (FeedHub). Old records are pruned here too (any process may prune; deleting twice is harmless).
 */
export class FeedService {
  readonly hub: FeedHub;
  readonly limits: FeedLimits;
  #listener: Listener | undefined;
  #relay: FeedRelay | undefined;
  #prune: NodeJS.Timeout | undefined;
  #pruning: Promise<unknown> | undefined;
  readonly #retentionSecs: number;
  readonly #pruneIntervalMs: number;

  constructor(
    private readonly db: Db,
    private readonly accounts: { authenticate(token: string): Promise<Account | undefined> },
    private readonly onError: (error: unknown, context: string) => void = () => undefined,
    options: FeedOptions = {},
  ) {
    this.limits = { ...DEFAULT_LIMITS, ...options.limits };
    this.hub = new FeedHub({
      snapshot: (marketId) => repo.bookSnapshot(this.db, marketId),
      maxPending: this.limits.maxPendingRecords,
      onError: (error) => this.onError(error, 'feed ticker snapshot'),
    });
    this.#retentionSecs = options.retentionSecs ?? 600;
    this.#pruneIntervalMs = options.pruneIntervalMs ?? 60_000;
  }

  /** LISTENs on a dedicated connection and takes every market's current position; then records flow. */
  async start(connectionString: string): Promise<void> {
    const listener: Listener = new Listener(connectionString, repo.FEED_CHANNEL, {
      notify: (payload) => relay.notified(payload),
      connected: (): Promise<void> => relay.resync(),
      error: (error) => this.onError(error, 'feed listener'),
    }, 'dots-feed-listener');
    const relay: FeedRelay = new FeedRelay(
      { sequences: (): Promise<Array<[string, number]>> => repo.feedSequences(listener), read: (after, limit) => repo.readFeedEvents(listener, after, limit) },
      {
        wants: (marketId, accounts) => this.hub.wants(marketId, accounts),
        publish: (record) => this.hub.publish(new PublishedRecord(record)),
        gap: (marketId) => this.hub.gap(marketId),
        error: (error) => this.onError(error, 'feed relay'),
      },
    );
    this.#relay = relay;
    this.#listener = listener;
    await listener.start();
    const prune = () => {
      this.#pruning = repo
        .pruneFeedEvents(this.db, this.#retentionSecs)
        .catch((error: unknown) => this.onError(error, 'feed prune'))
        .finally(() => {
          this.#pruning = undefined;
        });
    };
    this.#prune = setInterval(prune, this.#pruneIntervalMs);
    this.#prune.unref();
  }

  /** A new client connection (authenticated when `account` is given). */
  openSession(connection: Connection, account?: Account, token?: string): FeedSession {
    return new FeedSession(
      {
        hub: this.hub,
        limits: this.limits,
        authenticate: (t) => this.accounts.authenticate(t),
        findMarkets: (tickers) => repo.findMarketsByTicker(this.db, tickers),
        snapshot: (marketId) => repo.bookSnapshot(this.db, marketId),
        onError: (error) => this.onError(error, 'feed session'),
      },
      connection,
      account,
      token,
    );
  }

  authenticate(token: string): Promise<Account | undefined> {
    return this.accounts.authenticate(token);
  }

  /** Stops listening and pruning (connections are closed by the transport first). */
  async stop(): Promise<void> {
    if (this.#prune) clearInterval(this.#prune);
    await this.#relay?.stop();
    await this.#listener?.stop();
    await this.#pruning;
  }
}

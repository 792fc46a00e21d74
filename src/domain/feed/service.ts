import type { Db } from '../../db/knex.js';
import { Listener } from '../../db/listener.js';
import * as repo from '../../db/repositories/feed.js';
import type { Account, SessionChange } from '../accounts/service.js';
import { FeedHub } from './hub.js';
import { PublishedRecord } from './messages.js';
import { FeedRelay } from './relay.js';
import { DEFAULT_LIMITS, FeedSession, type Connection, type FeedLimits } from './session.js';
import { SnapshotBatcher } from './snapshots.js';
import type { FeedRecord } from './types.js';

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
 * called by TradingTransaction), which the process that committed them NOTIFYs (repo.FeedNotifier) and
 * hands to its own feed (`committed`); every process's listener reads the records it did not write in order
 * per market (FeedRelay) and fans them out to the subscriptions of its connections (FeedHub). Old records
 * are pruned here too (any process may prune; deleting twice is harmless).
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
  readonly #snapshots: SnapshotBatcher;
  /** Open sessions authenticated with a token, to check again when the database announces a session change. */
  readonly #authenticated = new Set<FeedSession>();

  constructor(
    private readonly db: Db,
    private readonly accounts: {
      authenticate(token: string): Promise<Account | undefined>;
      onSessionChange?(listener: (change: SessionChange) => void): void;
      /** The account of a live API key; undefined once it is revoked. */
      accountOfKey?(keyId: string): Promise<Account | undefined>;
    },
    private readonly onError: (error: unknown, context: string) => void = () => undefined,
    options: FeedOptions = {},
  ) {
    this.limits = { ...DEFAULT_LIMITS, ...options.limits };
    this.#snapshots = new SnapshotBatcher((marketIds) => repo.bookSnapshots(this.db, marketIds));
    this.hub = new FeedHub({
      snapshot: (marketId) => this.#snapshots.snapshot(marketId),
      maxPending: this.limits.maxPendingRecords,
      onError: (error) => this.onError(error, 'feed ticker snapshot'),
    });
    // A logout or a revoked session closes the connections that authenticated with it (within a round trip).
    accounts.onSessionChange?.((change) => {
      for (const session of this.#authenticated) {
        if (
          change.kind === 'all' ||
          (change.kind === 'token' && session.tokenHash === change.tokenHash) ||
          (change.kind === 'key' && session.apiKeyId === change.keyId) ||
          (change.kind === 'account' && session.accountId === change.accountId)
        ) {
          session.revalidate().catch((error: unknown) => this.onError(error, 'feed session check'));
        }
      }
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

  /** Feed records this process committed (TradingTransaction), for its own subscribers. */
  committed(records: readonly FeedRecord[]): void {
    this.#relay?.committed(records);
  }

  /** A new client connection (authenticated when `account` is given, with `token` or the API key `apiKeyId`). */
  openSession(connection: Connection, account?: Account, token?: string, apiKeyId?: string): FeedSession {
    const session: FeedSession = new FeedSession(
      {
        hub: this.hub,
        limits: this.limits,
        authenticate: (t) => this.accounts.authenticate(t),
        ...(this.accounts.accountOfKey && { accountOfKey: (keyId: string) => this.accounts.accountOfKey!(keyId) }),
        findMarkets: (tickers) => repo.findMarketsByTicker(this.db, tickers),
        snapshot: (marketId) => this.#snapshots.snapshot(marketId),
        onError: (error) => this.onError(error, 'feed session'),
        authenticated: () => this.#authenticated.add(session),
        closed: () => this.#authenticated.delete(session),
      },
      connection,
      account,
      token,
      apiKeyId,
    );
    if (token !== undefined || apiKeyId !== undefined) this.#authenticated.add(session);
    return session;
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

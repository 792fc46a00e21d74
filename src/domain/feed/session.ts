import type { Account } from '../accounts/service.js';
import { hashToken } from '../accounts/tokens.js';
import { clip } from '../errors.js';
import { findUnstorable } from '../storable-text.js';
import { FeedHub, Subscription, type Outlet } from './hub.js';
import { errorReply, reply, snapshotMsg } from './messages.js';
import { CHANNELS, ErrorCode, isPrivateChannel, type BookSnapshot, type Channel, type ErrorCodeValue } from './types.js';

/**
 * One client connection's side of the feed: its commands (Kalshi's `{id, cmd, params}`), its subscriptions
 * and its authentication. Transport-free: the WebSocket server hands it text frames and gives it a
 * `Connection` to write to.
 *
 * Commands run one at a time, in the order received, so replies come back in order.
 */

export interface FeedLimits {
  /** Subscriptions one connection may hold. */
  maxSubscriptions: number;
  /** Markets one subscribe command may name. */
  maxMarketsPerSubscription: number;
  /** Records kept for an orderbook_delta market while its snapshot is taken. */
  maxPendingRecords: number;
  /** Commands waiting to run on one connection. */
  maxQueuedCommands: number;
}

export const DEFAULT_LIMITS: FeedLimits = {
  maxSubscriptions: 100,
  maxMarketsPerSubscription: 100,
  maxPendingRecords: 10_000,
  maxQueuedCommands: 100,
};

/** What a session needs from the rest of the service. */
export interface SessionDeps {
  hub: FeedHub;
  limits: FeedLimits;
  authenticate(token: string): Promise<Account | undefined>;
  /** The account of a live API key (undefined once revoked), for a connection opened with one. */
  accountOfKey?(keyId: string): Promise<Account | undefined>;
  /** Markets by exact ticker; unknown ones are left out. */
  findMarkets(tickers: readonly string[]): Promise<Array<{ id: string; ticker: string }>>;
  snapshot(marketId: string): Promise<BookSnapshot>;
  onError(error: unknown): void;
  /** The session authenticated with a token (an `auth` command). */
  authenticated?(): void;
  /** The session is closed. */
  closed?(): void;
}

/** The transport's side: writing frames, and cutting the connection off with an error. */
export interface Connection {
  send(text: string): void;
  /** Sends `{type: "error", msg: {code, msg}}` and closes the connection. */
  terminate(code: ErrorCodeValue, message: string): void;
  /**
   * Takes `markets` order-book snapshots from the client's budget: undefined if allowed, else a refusal
   * message. Without it, snapshots are not limited.
   */
  takeSnapshots?(markets: number): Promise<string | undefined>;
}

class CommandError extends Error {
  constructor(
    readonly code: ErrorCodeValue,
    message: string,
  ) {
    super(message);
  }
}

type Params = Record<string, unknown>;

export class FeedSession implements Outlet {
  readonly #subscriptions = new Map<number, Subscription>();
  #nextSid = 1;
  #queue: Promise<void> = Promise.resolve();
  #queued = 0;
  #closed = false;
  #tokenHash: string | undefined;

  constructor(
    private readonly deps: SessionDeps,
    private readonly connection: Connection,
    private account: Account | undefined,
    private token: string | undefined,
    /** The API key the connection was opened with (signed upgrade headers), instead of a token. */
    readonly apiKeyId?: string,
  ) {}

  get accountId(): string | undefined {
    return this.account?.id;
  }

  /** The hash (hex) of the token the connection authenticated with, as session changes name it. */
  get tokenHash(): string | undefined {
    if (this.token === undefined) return undefined;
    this.#tokenHash ??= hashToken(this.token).toString('hex');
    return this.#tokenHash;
  }

  get subscriptionCount(): number {
    return this.#subscriptions.size;
  }

  /** A text frame from the client. */
  receive(text: string): void {
    if (this.#closed) return;
    if (this.#queued >= this.deps.limits.maxQueuedCommands) {
      this.connection.send(errorReply(undefined, ErrorCode.unprocessable, `too many commands waiting (at most ${this.deps.limits.maxQueuedCommands}): wait for the replies`));
      return;
    }
    this.#queued += 1;
    this.#queue = this.#queue
      .then(() => this.#run(text))
      .catch((error: unknown) => this.deps.onError(error))
      .finally(() => {
        this.#queued -= 1;
      });
  }

  /** A command frame above the size limit (not read). */
  tooLarge(limit: number): void {
    this.connection.send(errorReply(undefined, ErrorCode.messageTooLarge, `command frames are limited to ${limit} bytes`));
  }

  /** Outlet: a subscription's message. */
  send(text: string): void {
    if (!this.#closed) this.connection.send(text);
  }

  /** Outlet: a subscription fell too far behind. */
  overflow(reason: string): void {
    if (this.#closed) return;
    this.connection.terminate(ErrorCode.slowConsumer, `slow consumer: ${reason}`);
    this.close();
  }

  /** The token (or API key) the connection authenticated with is still valid; if not, it is cut off. */
  async revalidate(): Promise<void> {
    if (this.#closed) return;
    let account: Account | undefined;
    if (this.token !== undefined) account = await this.deps.authenticate(this.token);
    else if (this.apiKeyId !== undefined && this.deps.accountOfKey) account = await this.deps.accountOfKey(this.apiKeyId);
    else return;
    if (!account && !this.#closed) {
      this.connection.terminate(ErrorCode.sessionExpired, this.token !== undefined ? 'the session token was revoked or has expired' : 'the API key was revoked');
      this.close();
    }
  }

  /** The connection is gone: every subscription is dropped. */
  close(): void {
    if (this.#closed) return;
    this.#closed = true;
    for (const sub of this.#subscriptions.values()) this.deps.hub.remove(sub);
    this.#subscriptions.clear();
    this.deps.closed?.();
  }

  async #run(text: string): Promise<void> {
    if (this.#closed) return;
    let id: number | undefined;
    try {
      let command: unknown;
      try {
        command = JSON.parse(text);
      } catch {
        throw new CommandError(ErrorCode.unprocessable, 'the message is not valid JSON');
      }
      if (typeof command !== 'object' || command === null || Array.isArray(command)) throw new CommandError(ErrorCode.unprocessable, 'a command is a JSON object {id, cmd, params}');
      const { id: rawId, cmd, params } = command as { id?: unknown; cmd?: unknown; params?: unknown };
      // Text the database cannot store (NUL, lone surrogates) never reaches a query.
      const unstorable = findUnstorable(command);
      if (unstorable) {
        if (typeof rawId === 'number' && Number.isSafeInteger(rawId) && rawId >= 0) id = rawId;
        throw new CommandError(ErrorCode.invalidParameter, `${unstorable.path.slice(1).replace(/\//g, '.') || 'the command'} ${unstorable.problem}`);
      }
      if (rawId !== undefined) {
        if (typeof rawId !== 'number' || !Number.isSafeInteger(rawId) || rawId < 0) throw new CommandError(ErrorCode.unprocessable, 'id must be a non-negative integer');
        id = rawId;
      }
      if (params !== undefined && (typeof params !== 'object' || params === null || Array.isArray(params))) throw new CommandError(ErrorCode.invalidParameter, 'params must be an object');
      switch (cmd) {
        case 'subscribe':
          return await this.#subscribe(id, requireParams(params));
        case 'unsubscribe':
          return this.#unsubscribe(id, requireParams(params));
        case 'list_subscriptions':
          return this.connection.send(
            reply(id, 'ok', {
              msg: {
                subscriptions: [...this.#subscriptions.values()].map((s) => ({ sid: s.sid, channel: s.channel, ...(s.marketTickers ? { market_tickers: s.marketTickers } : {}) })),
              },
            }),
          );
        case 'auth':
          return await this.#auth(id, requireParams(params));
        default:
          throw new CommandError(ErrorCode.unknownCommand, typeof cmd === 'string' ? `unknown command '${clip(cmd, 60)}'` : 'cmd is required');
      }
    } catch (error) {
      if (this.#closed) return;
      if (error instanceof CommandError) this.connection.send(errorReply(id, error.code, error.message));
      else {
        this.deps.onError(error);
        this.connection.send(errorReply(id, ErrorCode.internal, 'internal error'));
      }
    }
  }

  async #subscribe(id: number | undefined, params: Params): Promise<void> {
    const channels = params.channels;
    if (channels === undefined || (Array.isArray(channels) && channels.length === 0)) throw new CommandError(ErrorCode.channelsRequired, 'params.channels is required: a non-empty array of channel names');
    if (!Array.isArray(channels) || !channels.every((c) => typeof c === 'string')) throw new CommandError(ErrorCode.invalidParameter, 'params.channels must be an array of channel names');
    const unique = [...new Set(channels)];
    for (const channel of unique) {
      if (!(CHANNELS as readonly string[]).includes(channel)) throw new CommandError(ErrorCode.unknownChannel, `unknown channel '${clip(channel, 60)}' (channels: ${CHANNELS.join(', ')})`);
      if (isPrivateChannel(channel as Channel) && !this.account) throw new CommandError(ErrorCode.authRequired, `channel '${channel}' is private: connect with Authorization: Bearer <token> (or send an auth command) first`);
    }

    const tickers = tickersOf(params);
    if (tickers !== undefined && tickers.length > this.deps.limits.maxMarketsPerSubscription) {
      throw new CommandError(ErrorCode.tooManySubscriptions, `at most ${this.deps.limits.maxMarketsPerSubscription} markets per subscription`);
    }
    if (unique.includes('orderbook_delta') && tickers === undefined) throw new CommandError(ErrorCode.marketTickerRequired, 'orderbook_delta needs params.market_ticker or params.market_tickers');
    if (this.#subscriptions.size + unique.length > this.deps.limits.maxSubscriptions) {
      throw new CommandError(ErrorCode.tooManySubscriptions, `at most ${this.deps.limits.maxSubscriptions} subscriptions per connection`);
    }
    if (unique.includes('orderbook_delta') && this.connection.takeSnapshots) {
      const refusal = await this.connection.takeSnapshots(tickers!.length);
      if (refusal !== undefined) throw new CommandError(ErrorCode.snapshotRateLimited, refusal);
    }
    let markets: Array<{ id: string; ticker: string }> | null = null;
    if (tickers !== undefined) {
      const found = await this.deps.findMarkets(tickers);
      const byTicker = new Map(found.map((m) => [m.ticker, m]));
      const missing = tickers.find((t) => !byTicker.has(t));
      if (missing !== undefined) throw new CommandError(ErrorCode.marketNotFound, `market '${clip(missing, 60)}' not found`);
      markets = tickers.map((t) => byTicker.get(t)!);
    }
    if (this.#closed) return;

    for (const channel of unique as Channel[]) {
      const sub = new Subscription(this.#nextSid, channel, markets, isPrivateChannel(channel) ? this.account!.id : undefined, this, this.deps.limits.maxPendingRecords);
      this.#nextSid += 1;
      // Registered before its snapshots are read: nothing committed after them can be missed.
      this.#subscriptions.set(sub.sid, sub);
      this.deps.hub.add(sub);
      this.connection.send(reply(id, 'subscribed', { msg: { channel, sid: sub.sid } }));
      if (channel === 'orderbook_delta') await this.#snapshots(id, sub, markets!);
    }
  }

  async #snapshots(id: number | undefined, sub: Subscription, markets: Array<{ id: string; ticker: string }>): Promise<void> {
    try {
      const snapshots = await Promise.all(markets.map((m) => this.deps.snapshot(m.id)));
      markets.forEach((market, i) => sub.snapshot(market.id, snapshotMsg(market, snapshots[i]!), snapshots[i]!.seq));
    } catch (error) {
      this.deps.onError(error);
      if (this.#closed) return;
      this.#drop(sub);
      this.connection.send(errorReply(id, ErrorCode.internal, `the order book snapshot could not be read: subscription ${sub.sid} was dropped, subscribe again`));
    }
  }

  #unsubscribe(id: number | undefined, params: Params): void {
    const sids = params.sids;
    if (sids === undefined || (Array.isArray(sids) && sids.length === 0)) throw new CommandError(ErrorCode.sidsRequired, 'params.sids is required: a non-empty array of subscription ids');
    if (!Array.isArray(sids) || !sids.every((s) => Number.isSafeInteger(s))) throw new CommandError(ErrorCode.invalidParameter, 'params.sids must be an array of subscription ids');
    const unknown = (sids as number[]).find((sid) => !this.#subscriptions.has(sid));
    if (unknown !== undefined) throw new CommandError(ErrorCode.unknownSid, `no subscription with sid ${unknown}`);
    for (const sid of new Set(sids as number[])) {
      const sub = this.#subscriptions.get(sid)!;
      this.#drop(sub);
      this.connection.send(reply(id, 'unsubscribed', { sid, msg: { sid, channel: sub.channel } }));
    }
  }

  async #auth(id: number | undefined, params: Params): Promise<void> {
    if (this.account) throw new CommandError(ErrorCode.invalidParameter, 'this connection is already authenticated');
    const token = params.token;
    if (typeof token !== 'string' || token.length === 0 || token.length > 512) throw new CommandError(ErrorCode.invalidParameter, 'params.token must be the Bearer token (a string)');
    const account = await this.deps.authenticate(token);
    if (!account) throw new CommandError(ErrorCode.authRequired, 'invalid or expired token');
    if (this.#closed) return;
    this.account = account;
    this.token = token;
    this.#tokenHash = undefined;
    this.deps.authenticated?.();
    this.connection.send(reply(id, 'authenticated', { msg: { user_id: account.id } }));
  }

  #drop(sub: Subscription): void {
    this.#subscriptions.delete(sub.sid);
    this.deps.hub.remove(sub);
  }
}

function requireParams(params: unknown): Params {
  if (params === undefined) throw new CommandError(ErrorCode.paramsRequired, 'params is required');
  return params as Params;
}

/** `market_ticker` or `market_tickers` (upper-cased, deduplicated, in order); undefined when neither. */
function tickersOf(params: Params): string[] | undefined {
  const { market_ticker: one, market_tickers: many } = params;
  if (one === undefined && many === undefined) return undefined;
  const list: unknown[] = [];
  if (one !== undefined) list.push(one);
  if (many !== undefined) {
    if (!Array.isArray(many)) throw new CommandError(ErrorCode.invalidParameter, 'params.market_tickers must be an array of tickers');
    list.push(...(many as unknown[]));
  }
  if (list.length === 0) throw new CommandError(ErrorCode.marketTickerRequired, 'params.market_tickers is empty');
  if (!list.every((t) => typeof t === 'string' && t.length > 0 && t.length <= 200)) throw new CommandError(ErrorCode.invalidParameter, 'market tickers must be non-empty strings');
  return [...new Set((list as string[]).map((t) => t.toUpperCase()))];
}

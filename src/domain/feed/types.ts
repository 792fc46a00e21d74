/**
 * The real-time feed's vocabulary: channels, the commands a client sends, the messages the server sends
 * (Kalshi's WebSocket shapes: `{id, cmd, params}` in, `{type, sid, seq, msg}` out), and the outbox record
 * a trading transaction writes (src/db/repositories/feed.ts). The AsyncAPI document
 * (openapi/asyncapi.yaml) describes the same shapes for clients.
 */
import type { BookSnapshotRead } from '../../db/repositories/feed.js';
import type { ChangedOrderRecord, MarketFiguresRecord } from '../../db/repositories/trading.js';
import type { OrderView } from '../trading/views.js';
import type { Action, FillRole, Outcome } from '../../db/tables.js';

export const PUBLIC_CHANNELS = ['orderbook_delta', 'trade', 'ticker'] as const;
export const PRIVATE_CHANNELS = ['fill', 'user_orders'] as const;
export type Channel = (typeof PUBLIC_CHANNELS)[number] | (typeof PRIVATE_CHANNELS)[number];
export const CHANNELS: readonly Channel[] = [...PUBLIC_CHANNELS, ...PRIVATE_CHANNELS];
export const isPrivateChannel = (channel: Channel): boolean => (PRIVATE_CHANNELS as readonly string[]).includes(channel);

/**
 * Error codes of `{type: "error", msg: {code, msg}}`. 1-17 are Kalshi's numbers for the same conditions;
 * 100 and up are this service's own.
 */
export const ErrorCode = {
  /** Not JSON, not an object, or a malformed `id`. */
  unprocessable: 1,
  paramsRequired: 2,
  channelsRequired: 3,
  sidsRequired: 4,
  unknownCommand: 5,
  unknownSid: 7,
  unknownChannel: 8,
  /** A private channel without a token, or an invalid token sent with `auth`. */
  authRequired: 9,
  invalidParameter: 11,
  marketTickerRequired: 14,
  marketNotFound: 16,
  internal: 17,
  /** A command frame above the size limit. */
  messageTooLarge: 100,
  /** The connection's send buffer passed its bound: the server closes it. */
  slowConsumer: 101,
  /** The per-connection limit of subscriptions or markets. */
  tooManySubscriptions: 102,
  /** The token the connection authenticated with was revoked or expired: the server closes it. */
  sessionExpired: 103,
  /** The server is shutting down: the server closes the connection. */
  goingAway: 104,
  /** Too many connections from one client address: the server closes the new one. */
  tooManyConnections: 105,
  /** Too many order-book snapshots asked for per second from one client address: the subscribe is refused. */
  snapshotRateLimited: 106,
  /** Too many command frames from one client address (RATE_LIMIT_WS_COMMANDS): the command is not run. */
  commandRateLimited: 107,
} as const;
export type ErrorCodeValue = (typeof ErrorCode)[keyof typeof ErrorCode];

// --- the outbox record (one per market per trading transaction)

/** A change of resting quantity at one price level, in Kalshi's terms: the bids of one outcome. */
export interface BookChange {
  side: Outcome;
  /** Outcome-frame price ("0.45"). */
  price: string;
  /** Signed change of the resting contracts ("-10", "2.5"). */
  delta: string;
}

export interface TradeEvent {
  trade_id: string;
  yes_price: string;
  count: string;
  taker_side: Outcome;
}

export interface FillEvent {
  fill_id: string;
  trade_id: string;
  order_id: string;
  account_id: string;
  side: Outcome;
  action: Action;
  /** The account's outcome-frame price. */
  price: string;
  yes_price: string;
  count: string;
  role: FillRole;
}

/** What one trading transaction did to one market: the outbox record's `events`, built by the service. */
export interface FeedEvents {
  book: BookChange[];
  trades: TradeEvent[];
  fills: FillEvent[];
  /** Every order of the market the transaction changed (placed, filled, decreased, cancelled), as committed. */
  orders: CommittedOrder[];
  /** The market's figures after the transaction; null when it did not change them. */
  market: MarketFigures | null;
}

/** A changed order as the transaction committed it (the row its write returned, timestamps as ISO text). */
export type CommittedOrder = Omit<ChangedOrderRecord, 'expiration_ts' | 'created_at' | 'updated_at'> & { expiration_ts: string | null; created_at: string; updated_at: string };

/** A market's traded figures (decimal strings as stored). */
export type MarketFigures = MarketFiguresRecord;

/** One outbox record as read back. */
export interface FeedRecord {
  marketId: string;
  seq: number;
  ticker: string;
  events: FeedEvents;
  createdAt: Date;
}

// --- wire messages (payloads of `msg`)

export interface OrderbookSnapshotMsg {
  market_ticker: string;
  market_id: string;
  /** YES bids, best first: [price, count]. */
  yes: Array<[string, string]>;
  /** NO bids, best first. */
  no: Array<[string, string]>;
}

export interface OrderbookDeltaMsg {
  market_ticker: string;
  market_id: string;
  price: string;
  delta: string;
  side: Outcome;
  ts: string;
}

export interface TradeMsg {
  trade_id: string;
  market_ticker: string;
  market_id: string;
  yes_price: string;
  no_price: string;
  count: string;
  taker_side: Outcome;
  ts: string;
}

export interface TickerMsg {
  market_ticker: string;
  market_id: string;
  /** YES price of the last trade; null before the first. */
  price: string | null;
  yes_bid: string | null;
  yes_ask: string | null;
  volume: string;
  open_interest: string;
  ts: string;
}

export interface FillMsg {
  fill_id: string;
  trade_id: string;
  order_id: string;
  client_order_id: string | null;
  market_ticker: string;
  market_id: string;
  side: Outcome;
  action: Action;
  price: string;
  yes_price: string;
  count: string;
  is_taker: boolean;
  ts: string;
}

export type UserOrderMsg = OrderView;

/** A snapshot of a market's book and figures, and the feed position it was taken at. */
export type BookSnapshot = BookSnapshotRead;

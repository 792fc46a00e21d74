import { formatTicks, TICKS_PER_DOT, ticksOf } from '../trading/money.js';
import { orderbookView, orderView } from '../trading/views.js';
import type {
  BookSnapshot,
  CommittedOrder,
  ErrorCodeValue,
  FeedRecord,
  FillMsg,
  OrderbookDeltaMsg,
  OrderbookSnapshotMsg,
  TradeMsg,
  UserOrderMsg,
} from './types.js';

/**
 * Wire messages from outbox records (pure). A record's messages are serialised once, however many
 * subscriptions receive them (`PublishedRecord`); each subscription frames them with its sid and seq.
 */

/** `{type, sid, seq, msg}`: `msgJson` is already JSON. */
export function frame(type: string, sid: number, seq: number, msgJson: string): string {
  return `{"type":"${type}","sid":${sid},"seq":${seq},"msg":${msgJson}}`;
}

/** A reply to a command, `{id, type, ...}` (id left out when the command had none). */
export function reply(id: number | undefined, type: string, fields: Record<string, unknown>): string {
  return JSON.stringify(id === undefined ? { type, ...fields } : { id, type, ...fields });
}

export function errorReply(id: number | undefined, code: ErrorCodeValue, msg: string): string {
  return reply(id, 'error', { msg: { code, msg } });
}

export function snapshotMsg(market: { id: string; ticker: string }, snapshot: BookSnapshot): OrderbookSnapshotMsg {
  const book = orderbookView(snapshot.levels);
  return { market_ticker: market.ticker, market_id: market.id, yes: book.yes, no: book.no };
}

export function userOrderMsg(order: CommittedOrder, ticker: string): UserOrderMsg {
  return orderView({
    ...order,
    ticker,
    expiration_ts: order.expiration_ts === null ? null : new Date(order.expiration_ts),
    created_at: new Date(order.created_at),
    updated_at: new Date(order.updated_at),
  });
}

export interface AccountMessage {
  accountId: string;
  json: string;
}

/** One outbox record, ready to fan out: each kind of message built and serialised at most once. */
export class PublishedRecord {
  readonly marketId: string;
  readonly seq: number;
  readonly ts: string;
  #deltas?: string[];
  #trades?: string[];
  /** This record's ticker in this process (set by the hub when a ticker subscription wants it). */
  tickerMessage: { key: string; json: string } | undefined;
  #fills?: AccountMessage[];
  #orders?: AccountMessage[];
  #accounts?: Set<string>;

  constructor(readonly record: FeedRecord) {
    this.marketId = record.marketId;
    this.seq = record.seq;
    this.ts = record.createdAt.toISOString();
  }

  get deltas(): string[] {
    this.#deltas ??= this.record.events.book.map((change) => {
      const msg: OrderbookDeltaMsg = {
        market_ticker: this.record.ticker,
        market_id: this.marketId,
        price: change.price,
        delta: change.delta,
        side: change.side,
        ts: this.ts,
      };
      return JSON.stringify(msg);
    });
    return this.#deltas;
  }

  get trades(): string[] {
    this.#trades ??= this.record.events.trades.map((trade) => {
      const yes = ticksOf(trade.yes_price);
      const msg: TradeMsg = {
        trade_id: trade.trade_id,
        market_ticker: this.record.ticker,
        market_id: this.marketId,
        yes_price: formatTicks(yes),
        no_price: formatTicks(TICKS_PER_DOT - yes),
        count: trade.count,
        taker_side: trade.taker_side,
        ts: this.ts,
      };
      return JSON.stringify(msg);
    });
    return this.#trades;
  }

  get fills(): AccountMessage[] {
    if (!this.#fills) {
      const clientIds = new Map(this.record.events.orders.map((o) => [o.id, o.client_order_id]));
      this.#fills = this.record.events.fills.map((fill) => {
        const msg: FillMsg = {
          fill_id: fill.fill_id,
          trade_id: fill.trade_id,
          order_id: fill.order_id,
          client_order_id: clientIds.get(fill.order_id) ?? null,
          market_ticker: this.record.ticker,
          market_id: this.marketId,
          side: fill.side,
          action: fill.action,
          price: fill.price,
          yes_price: fill.yes_price,
          count: fill.count,
          is_taker: fill.role === 'taker',
          ts: this.ts,
        };
        return { accountId: fill.account_id, json: JSON.stringify(msg) };
      });
    }
    return this.#fills;
  }

  get orders(): AccountMessage[] {
    this.#orders ??= this.record.events.orders.map((order) => ({ accountId: order.account_id, json: JSON.stringify(userOrderMsg(order, this.record.ticker)) }));
    return this.#orders;
  }

  /** Accounts with a fill or an order change in this record. */
  get accounts(): Set<string> {
    if (!this.#accounts) {
      this.#accounts = new Set<string>();
      for (const fill of this.record.events.fills) this.#accounts.add(fill.account_id);
      for (const order of this.record.events.orders) this.#accounts.add(order.account_id);
    }
    return this.#accounts;
  }
}

import type { Db } from '../../db/knex.js';
import { cancelAllOrders, cancelOrder, cancelOrders } from './commands/cancel.js';
import { decreaseOrder } from './commands/decrease.js';
import { expireOrders } from './commands/expire.js';
import { getMarketCandles, getMarketsCandles, priceHistory, type CandleRequest } from './candles.js';
import { OrderPlacement } from './commands/place.js';
import * as queries from './queries.js';
import { MarketRollups } from './rollups.js';
import { TradingTransactions, type TradingTransactionOptions } from './transaction.js';
import type { CursorPage, ListOrdersInput, PlaceOrderInput, PreviewInput, Trading } from './types.js';

export interface TradingOptions extends TradingTransactionOptions {
  /** The clock (tests move it); defaults to the system clock. */
  now?: () => Date;
}

/**
 * Trading as one object for the handlers and the server's background loops: each operation is a command
 * (commands/) or a read (queries.ts), and this only hands them the process's TradingTransactions and clock.
 * Other services whose transactions include trading work (catalogue administration, order sessions) open
 * them through `transactions`.
 *
 * Concurrency: everything that changes a market's book runs in one transaction holding that market's row
 * lock (several markets: in id order), then locks the balance rows of every account it touches in account
 * order (placements committed together lock every balance row any of them can touch). Positions of a market
 * change only under its lock. So matching is serialised per market across any number of processes, and
 * transactions never wait on each other in a cycle. Within a process, placements are made one transaction
 * at a time, and those that arrive meanwhile wait in memory and are made together in the next one
 * (commands/place.ts).
 */
export class TradingService implements Trading {
  readonly transactions: TradingTransactions;
  readonly #rollups: MarketRollups;
  readonly #placement: OrderPlacement;
  readonly #now: () => Date;

  constructor(
    private readonly db: Db,
    options: TradingOptions = {},
  ) {
    this.#now = options.now ?? (() => new Date());
    this.#rollups = new MarketRollups(db);
    this.transactions = new TradingTransactions(db, this.#rollups, options);
    this.#placement = new OrderPlacement(this.transactions);
  }

  // --- orders

  previewOrder = (accountId: string, input: PreviewInput) => queries.previewOrder(this.db, accountId, input);
  placeOrder = (accountId: string, input: PlaceOrderInput) => this.#placement.place(accountId, input, this.#now());
  placeOrders = (accountId: string, inputs: readonly PlaceOrderInput[]) => this.#placement.placeMany(accountId, inputs, this.#now());
  listOrders = (accountId: string, input: ListOrdersInput) => queries.listOrders(this.db, accountId, input);
  getOrder = (accountId: string, orderId: string) => queries.getOrder(this.db, accountId, orderId);
  cancelOrder = (accountId: string, orderId: string) => cancelOrder(this.transactions, accountId, orderId);
  cancelOrders = (accountId: string, orderIds: string[]) => cancelOrders(this.transactions, accountId, orderIds);
  cancelAllOrders = (accountId: string, input: { market?: string; ticker?: string }) => cancelAllOrders(this.transactions, accountId, input);
  decreaseOrder = (accountId: string, orderId: string, count: string) => decreaseOrder(this.transactions, accountId, orderId, count);
  /** Cancels every live order past its expiry at `now` (default: the service clock); returns how many. */
  expireOrders = (now: Date = this.#now()) => expireOrders(this.transactions, now);

  // --- portfolio and market data

  getBalance = (accountId: string) => queries.getBalance(this.db, accountId);
  listPositions = (accountId: string, input: CursorPage) => queries.listPositions(this.db, accountId, input);
  listFills = (accountId: string, input: CursorPage) => queries.listFills(this.db, accountId, input);
  listSettlements = (accountId: string, input: CursorPage) => queries.listSettlements(this.db, accountId, input);
  listTrades = (input: CursorPage) => queries.listTrades(this.db, input);
  getOrderbook = (ticker: string) => queries.getOrderbook(this.db, ticker, this.#now());
  getMarketCandles = (seriesTicker: string, ticker: string, request: CandleRequest) => getMarketCandles(this.db, seriesTicker, ticker, request, this.#now());
  getMarketsCandles = (tickers: readonly string[], request: CandleRequest) => getMarketsCandles(this.db, tickers, request, this.#now());
  /** A market's (ticker or id) last trade price per period of `fidelity` minutes ending in [start, end] (Unix seconds): candles.ts. */
  priceHistory = (market: string, range: { start: number; end: number }, fidelity: number) => priceHistory(this.db, market, range, fidelity, this.#now());

  // --- after commit

  /** Refreshes the events and candles of the markets changed since the last call (rollups.ts); returns how many markets. */
  flushRollups = () => this.#rollups.flush();
  /** Resolves once the feed notifications of committed transactions have been sent (before closing the pool). */
  flushFeedNotifications = () => this.transactions.flushNotifications();
}

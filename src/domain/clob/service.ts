import type { Queryable } from '../../db/knex.js';
import * as repo from '../../db/repositories/clob.js';
import { bookLevels } from '../../db/repositories/trading.js';
import type { Outcome } from '../../db/tables.js';
import type { ApiKeyService } from '../api-keys/service.js';
import { conflict, DomainError, invalid, notFound } from '../errors.js';
import { yesPriceOf } from '../trading/book.js';
import { clip } from '../errors.js';
import { orderIdOf } from '../trading/input.js';
import { microOf, ticksOf } from '../trading/money.js';
import { formatLots, formatMicroDots, formatTicks } from '../trading/money.js';
import type { PlaceOrderInput, Trading } from '../trading/types.js';
import { checkSignedOrder, type ClientSignedOrder } from './signed-order.js';
import {
  cancelAnswer,
  clobMarketView,
  cursorKey,
  halfTicksText,
  MIN_ORDER_SIZE,
  nextCursor,
  openOrderView,
  outcomeOfToken,
  placedAnswer,
  refusal,
  sideName,
  TICK_SIZE,
  tokenBook,
  trimZeros,
  tradeView,
  withHash,
  type ClobMarketView,
  type ClobTradeView,
  type OpenOrderView,
  type OrderBookSummary,
  type PostOrderAnswer,
} from './views.js';

/**
 * The order-book (CLOB) client's API over this exchange: market data by outcome token, the caller's orders
 * and trades in the client's shapes, and the client's signed orders, placed by the trading service's own
 * placement (one path for every order). A token id names a market and one of its outcomes; trading a NO token
 * is trading the market's NO side in its one YES-frame book.
 */

/** Items of a page of markets, open orders or trades. */
const PAGE_SIZE = 100;
/** The intervals of a price history up to now, in seconds. */
const INTERVAL_SECONDS = { '1h': 3600, '6h': 6 * 3600, '1d': 86_400, '1w': 7 * 86_400 } as const;
/** A price history's default periods (minutes), the shortest that keeps it within PRICE_HISTORY_POINTS points. */
const PRICE_HISTORY_FIDELITIES = [1, 5, 15, 60, 360, 1440];
const PRICE_HISTORY_POINTS = 1000;

/** Orders one POST /orders places at most. */
const MAX_SIGNED_ORDERS = 15;

/** An order as the client posts it (`orderToJson`). */
export interface ClientOrderPost {
  order: ClientSignedOrder;
  owner?: string;
  orderType?: string;
  deferExec?: boolean;
  postOnly?: boolean;
}

export interface Page<T> {
  limit: number;
  count: number;
  next_cursor: string;
  data: T[];
}

/** Who places signed orders: the account, and the address of the order-book key that signed the request, if one did. */
export interface ClobCaller {
  accountId: string;
  keyAddress?: string;
}

export class ClobService {
  constructor(
    private readonly db: Queryable,
    private readonly trading: Pick<Trading, 'placeOrders' | 'cancelOrders' | 'priceHistory'>,
    private readonly apiKeys: Pick<ApiKeyService, 'list'>,
    private readonly now: () => Date = () => new Date(),
  ) {}

  // --- markets and tokens

  /** The market of an outcome token (404 when no market has it). */
  async marketOfToken(tokenId: string): Promise<repo.ClobMarketRecord> {
    const market = await repo.findMarketByToken(this.db, tokenId);
    if (!market) throw notFound(`no outcome token '${clip(tokenId, 80)}'`);
    return market;
  }

  /** The markets of several tokens, each token's (404 naming the first unknown one). */
  async #marketsOfTokens(tokenIds: readonly string[]): Promise<Map<string, repo.ClobMarketRecord>> {
    const found = await repo.findMarketsByTokens(this.db, [...new Set(tokenIds)]);
    const byToken = new Map(found.flatMap((m) => [[m.yes_token_id, m] as const, [m.no_token_id, m] as const]));
    const unknown = tokenIds.find((id) => !byToken.has(id));
    if (unknown !== undefined) throw notFound(`no outcome token '${clip(unknown, 80)}'`);
    return byToken;
  }

  async getMarket(conditionId: string): Promise<ClobMarketView> {
    const market = await repo.findMarketByCondition(this.db, conditionId.toLowerCase());
    if (!market) throw notFound(`no market with condition id '${clip(conditionId, 80)}'`);
    return clobMarketView(market);
  }

  async listMarkets(cursor: string | undefined): Promise<Page<ClobMarketView>> {
    const after = cursorKey(cursor);
    if (after === 'end') return { limit: PAGE_SIZE, count: 0, next_cursor: nextCursor(undefined, false), data: [] };
    const rows = await repo.listMarketsAfter(this.db, String(after ?? 0n), PAGE_SIZE + 1);
    const page = rows.slice(0, PAGE_SIZE);
    return { limit: PAGE_SIZE, count: page.length, next_cursor: nextCursor(page.at(-1)?.id, rows.length > PAGE_SIZE), data: page.map(clobMarketView) };
  }

  // --- market data

  async #book(market: repo.ClobMarketRecord, tokenId: string) {
    const side = outcomeOfToken(market, tokenId);
    return { side, ...tokenBook(side, await bookLevels(this.db, String(market.id), this.now())) };
  }

  async #lastTrade(market: repo.ClobMarketRecord, side: Outcome): Promise<{ price: string; side: 'BUY' | 'SELL' | '' }> {
    const last = await repo.lastTrade(this.db, String(market.id));
    if (!last) return { price: '0', side: '' };
    // The taker bought or sold its own outcome: seen from the other outcome, the reverse.
    const action = last.taker_side === side ? last.taker_action : last.taker_action === 'buy' ? 'sell' : 'buy';
    return { price: formatTicks(yesPriceOf(side, ticksOf(last.yes_price))), side: sideName(action) };
  }

  async #summary(market: repo.ClobMarketRecord, tokenId: string): Promise<OrderBookSummary> {
    const book = await this.#book(market, tokenId);
    const last = await this.#lastTrade(market, book.side);
    return withHash({
      market: market.condition_id,
      asset_id: tokenId,
      timestamp: String(this.now().getTime()),
      bids: book.bids,
      asks: book.asks,
      min_order_size: MIN_ORDER_SIZE,
      tick_size: TICK_SIZE,
      neg_risk: market.neg_risk,
      last_trade_price: last.price,
    });
  }

  async getBook(tokenId: string): Promise<OrderBookSummary> {
    return this.#summary(await this.marketOfToken(tokenId), tokenId);
  }

  async getBooks(tokenIds: readonly string[]): Promise<OrderBookSummary[]> {
    const markets = await this.#marketsOfTokens(tokenIds);
    return Promise.all(tokenIds.map((id) => this.#summary(markets.get(id)!, id)));
  }

  async #midpoint(market: repo.ClobMarketRecord, tokenId: string): Promise<string | undefined> {
    const { top } = await this.#book(market, tokenId);
    return top.bid === undefined || top.ask === undefined ? undefined : halfTicksText(top.bid + top.ask);
  }

  async #spread(market: repo.ClobMarketRecord, tokenId: string): Promise<string | undefined> {
    const { top } = await this.#book(market, tokenId);
    return top.bid === undefined || top.ask === undefined ? undefined : trimZeros(formatTicks(top.ask - top.bid));
  }

  /** BUY: the best bid; SELL: the best ask. */
  async #price(market: repo.ClobMarketRecord, tokenId: string, side: 'BUY' | 'SELL'): Promise<string | undefined> {
    const { top } = await this.#book(market, tokenId);
    const ticks = side === 'BUY' ? top.bid : top.ask;
    return ticks === undefined ? undefined : trimZeros(formatTicks(ticks));
  }

  async getMidpoint(tokenId: string): Promise<{ mid: string }> {
    const mid = await this.#midpoint(await this.marketOfToken(tokenId), tokenId);
    if (mid === undefined) throw notFound(`no midpoint for token '${clip(tokenId, 80)}': a side of its book is empty`);
    return { mid };
  }

  async getSpread(tokenId: string): Promise<{ spread: string }> {
    const spread = await this.#spread(await this.marketOfToken(tokenId), tokenId);
    if (spread === undefined) throw notFound(`no spread for token '${clip(tokenId, 80)}': a side of its book is empty`);
    return { spread };
  }

  async getPrice(tokenId: string, side: 'BUY' | 'SELL'): Promise<{ price: string }> {
    const price = await this.#price(await this.marketOfToken(tokenId), tokenId, side);
    if (price === undefined) throw notFound(`no ${side === 'BUY' ? 'bid' : 'ask'} for token '${clip(tokenId, 80)}'`);
    return { price };
  }

  /** Each token's midpoint (or spread), keyed by token; tokens whose book lacks a side are left out. */
  async getMidpoints(tokenIds: readonly string[]): Promise<Record<string, string>> {
    return this.#byToken(tokenIds, (market, id) => this.#midpoint(market, id));
  }

  async getSpreads(tokenIds: readonly string[]): Promise<Record<string, string>> {
    return this.#byToken(tokenIds, (market, id) => this.#spread(market, id));
  }

  async #byToken(tokenIds: readonly string[], read: (market: repo.ClobMarketRecord, tokenId: string) => Promise<string | undefined>): Promise<Record<string, string>> {
    const markets = await this.#marketsOfTokens(tokenIds);
    const answer: Record<string, string> = {};
    for (const id of new Set(tokenIds)) {
      const value = await read(markets.get(id)!, id);
      if (value !== undefined) answer[id] = value;
    }
    return answer;
  }

  /** `{token: {BUY?, SELL?}}` for each (token, side) asked. */
  async getPrices(items: ReadonlyArray<{ token_id: string; side: 'BUY' | 'SELL' }>): Promise<Record<string, { BUY?: string; SELL?: string }>> {
    const markets = await this.#marketsOfTokens(items.map((i) => i.token_id));
    const answer: Record<string, { BUY?: string; SELL?: string }> = {};
    for (const { token_id, side } of items) {
      const price = await this.#price(markets.get(token_id)!, token_id, side);
      if (price !== undefined) answer[token_id] = { ...answer[token_id], [side]: price };
    }
    return answer;
  }

  async getLastTradePrice(tokenId: string): Promise<{ price: string; side: 'BUY' | 'SELL' | '' }> {
    const market = await this.marketOfToken(tokenId);
    return this.#lastTrade(market, outcomeOfToken(market, tokenId));
  }

  async getLastTradesPrices(tokenIds: readonly string[]): Promise<Array<{ token_id: string; price: string; side: 'BUY' | 'SELL' | '' }>> {
    const markets = await this.#marketsOfTokens(tokenIds);
    return Promise.all(tokenIds.map(async (id) => ({ token_id: id, ...(await this.#lastTrade(markets.get(id)!, outcomeOfToken(markets.get(id)!, id))) })));
  }

  /**
   * The token's last trade price per period of `fidelity` minutes (in its frame), over `interval` up to now
   * (`max`: since the market was created), or from `startTs` (default: the market's creation) to `endTs`
   * (default: now); up to now, the period under way is included. Without `fidelity`, the shortest of PRICE_HISTORY_FIDELITIES that keeps it within
   * PRICE_HISTORY_POINTS points.
   */
  async getPricesHistory(
    tokenId: string,
    query: { interval?: keyof typeof INTERVAL_SECONDS | 'max'; startTs?: number; endTs?: number; fidelity?: number },
  ): Promise<{ history: Array<{ t: number; p: number }> }> {
    const market = await this.marketOfToken(tokenId);
    if (query.interval !== undefined && (query.startTs !== undefined || query.endTs !== undefined)) {
      throw invalid('use interval, or startTs and endTs, not both', [{ location: 'query', path: 'interval', message: 'interval with startTs or endTs' }]);
    }
    const now = Math.floor(this.now().getTime() / 1000);
    const created = Math.floor(market.created_at.getTime() / 1000);
    const explicitEnd = query.interval === undefined ? query.endTs : undefined;
    const end = explicitEnd ?? now;
    const start = query.interval === undefined ? (query.startTs ?? created) : query.interval === 'max' ? created : now - INTERVAL_SECONDS[query.interval];
    const fidelity = query.fidelity ?? PRICE_HISTORY_FIDELITIES.find((minutes) => (end - start) / (minutes * 60) <= PRICE_HISTORY_POINTS) ?? 1440;
    // Up to now: the period under way too, with the trades so far.
    const points = await this.trading.priceHistory(String(market.id), { start, end: explicitEnd ?? now + fidelity * 60 }, fidelity);
    const side = outcomeOfToken(market, tokenId);
    return { history: points.map(({ t, p }) => ({ t, p: Number(side === 'yes' ? p : trimZeros(formatMicroDots(1_000_000n - microOf(p)))) })) };
  }

  async getNegRisk(tokenId: string): Promise<{ neg_risk: boolean }> {
    return { neg_risk: (await this.marketOfToken(tokenId)).neg_risk };
  }

  // --- the caller's orders and trades

  /** `market` (condition id) or `asset_id` (token) as a market and, for a token, its outcome. */
  async #scope(market: string | undefined, assetId: string | undefined): Promise<{ marketId?: string; side?: Outcome } | null> {
    let scope: { marketId?: string; side?: Outcome } = {};
    if (market !== undefined && market !== '') {
      const row = await repo.findMarketByCondition(this.db, market.toLowerCase());
      if (!row) return null;
      scope = { marketId: String(row.id) };
    }
    if (assetId !== undefined && assetId !== '') {
      const row = await repo.findMarketByToken(this.db, assetId);
      if (!row || (scope.marketId !== undefined && scope.marketId !== String(row.id))) return null;
      scope = { marketId: String(row.id), side: outcomeOfToken(row, assetId) };
    }
    return scope;
  }

  async #openOrderViews(orders: Awaited<ReturnType<typeof repo.listOpenOrders>>): Promise<OpenOrderView[]> {
    const markets = new Map((await repo.findMarketsByIds(this.db, [...new Set(orders.map((o) => String(o.market_id)))])).map((m) => [String(m.id), m]));
    return orders.map((o) => openOrderView(o, markets.get(String(o.market_id))!));
  }

  /** The caller's live orders, newest first, optionally one (`id`), of one market (`market`) or one token (`asset_id`). */
  async listOpenOrders(accountId: string, filter: { id?: string; market?: string; asset_id?: string; next_cursor?: string }): Promise<Page<OpenOrderView>> {
    const before = cursorKey(filter.next_cursor);
    const scope = await this.#scope(filter.market, filter.asset_id);
    const orderId = filter.id === undefined || filter.id === '' ? undefined : orderIdOf(filter.id);
    if (before === 'end' || scope === null || (filter.id && !orderId)) return { limit: PAGE_SIZE, count: 0, next_cursor: nextCursor(undefined, false), data: [] };
    const rows = await repo.listOpenOrders(this.db, accountId, { ...scope, orderId }, before === undefined ? undefined : String(before), PAGE_SIZE + 1);
    const page = rows.slice(0, PAGE_SIZE);
    return { limit: PAGE_SIZE, count: page.length, next_cursor: nextCursor(page.at(-1)?.sequence, rows.length > PAGE_SIZE), data: await this.#openOrderViews(page) };
  }

  /** One of the caller's orders, whatever its status (404 for another account's). */
  async getOrder(accountId: string, orderId: string): Promise<OpenOrderView> {
    const id = orderIdOf(orderId);
    const row = id ? await repo.findOrderOfAccount(this.db, accountId, id) : undefined;
    if (!row) throw notFound(`no order '${clip(orderId, 40)}'`);
    return (await this.#openOrderViews([row]))[0]!;
  }

  /** The caller's trades, as maker and as taker, newest first. */
  async listTrades(
    accountId: string,
    filter: { id?: string; market?: string; asset_id?: string; before?: number; after?: number; next_cursor?: string },
  ): Promise<Page<ClobTradeView>> {
    const before = cursorKey(filter.next_cursor);
    const scope = await this.#scope(filter.market, filter.asset_id);
    const tradeId = filter.id === undefined || filter.id === '' ? undefined : /^\d{1,18}$/.test(filter.id) ? filter.id : null;
    if (before === 'end' || scope === null || tradeId === null) return { limit: PAGE_SIZE, count: 0, next_cursor: nextCursor(undefined, false), data: [] };
    const seconds = (s: number | undefined) => (s === undefined ? undefined : new Date(s * 1000));
    const rows = await repo.listAccountTrades(
      this.db,
      accountId,
      { ...scope, tradeId, before: seconds(filter.before), after: seconds(filter.after) },
      before === undefined ? undefined : String(before),
      PAGE_SIZE + 1,
    );
    const page = rows.slice(0, PAGE_SIZE);
    const markets = new Map((await repo.findMarketsByIds(this.db, [...new Set(page.map((r) => String(r.market_id)))])).map((m) => [String(m.id), m]));
    return { limit: PAGE_SIZE, count: page.length, next_cursor: nextCursor(page.at(-1)?.fill_id, rows.length > PAGE_SIZE), data: page.map((r) => tradeView(r, markets.get(String(r.market_id))!, accountId)) };
  }

  /** Cancels the caller's live orders (of one market or token, or all), answered in the client's shape. */
  async cancelLive(accountId: string, filter: { market?: string; asset_id?: string } = {}): Promise<{ canceled: string[]; not_canceled: Record<string, string> }> {
    const scope = await this.#scope(filter.market, filter.asset_id);
    if (scope === null) throw notFound('no market with that condition id or outcome token');
    const ids: string[] = [];
    for (let before: string | undefined, page: Awaited<ReturnType<typeof repo.listOpenOrders>>; ; before = page.at(-1)!.sequence) {
      page = await repo.listOpenOrders(this.db, accountId, scope, before, 1000);
      ids.push(...page.map((o) => o.id));
      if (page.length < 1000) break;
    }
    return this.#cancel(accountId, ids);
  }

  async #cancel(accountId: string, orderIds: readonly string[]): Promise<{ canceled: string[]; not_canceled: Record<string, string> }> {
    const results = [];
    for (let i = 0; i < orderIds.length; i += 1000) results.push(...(await this.trading.cancelOrders(accountId, orderIds.slice(i, i + 1000))));
    return cancelAnswer(results);
  }

  // --- signed placement

  /**
   * Places the client's signed orders (1 to 15), each answered in its position: checked (token, signature,
   * amounts, order type; a refusal is `{success: false, errorMsg}`), then placed together by the trading
   * service's placement, as one batch. `single`: one order, whose refusal is its DomainError (4xx) instead.
   */
  async placeSignedOrders(caller: ClobCaller, posts: readonly ClientOrderPost[], single = false): Promise<PostOrderAnswer[]> {
    if (posts.length === 0 || posts.length > MAX_SIGNED_ORDERS) throw invalid(`POST /orders places 1 to ${MAX_SIGNED_ORDERS} orders, got ${posts.length}`);
    // The signing key's address; with a Bearer token (or an RSA key), those of the account's order-book keys.
    const addresses = caller.keyAddress ? [caller.keyAddress] : (await this.apiKeys.list(caller.accountId)).flatMap((key) => (key.address ? [key.address] : []));
    if (addresses.length === 0) throw invalid('signed orders need order-book credentials: create an API key of kind hmac bound to your address');
    const checked = await Promise.all(
      posts.map(async (post): Promise<{ input: PlaceOrderInput } | { error: DomainError }> => {
        try {
          return { input: await this.#check(post, addresses) };
        } catch (error) {
          if (error instanceof DomainError) return { error };
          throw error;
        }
      }),
    );
    const first = checked[0]!;
    if (single && 'error' in first) throw first.error;
    const inputs = checked.flatMap((c) => ('input' in c ? [c.input] : []));
    const placed = inputs.length > 0 ? await this.trading.placeOrders(caller.accountId, inputs) : [];
    let next = 0;
    return checked.map((c) => {
      if ('error' in c) return refusal(c.error);
      const outcome = placed[next++]!;
      if ('error' in outcome) {
        if (!(outcome.error instanceof DomainError)) throw outcome.error;
        if (single) throw outcome.error;
        return refusal(outcome.error);
      }
      return placedAnswer(outcome.order);
    });
  }

  async #check(post: ClientOrderPost, addresses: readonly string[]): Promise<PlaceOrderInput> {
    const order = post.order;
    const market = await this.marketOfToken(String(order.tokenId));
    const signed = checkSignedOrder(order, post.orderType ?? 'GTC', post.postOnly ?? false, market.neg_risk, addresses);
    if (await repo.orderHashUsed(this.db, signed.signed.orderHash)) throw conflict(`this signed order (hash ${signed.signed.orderHash}) was placed before: sign a new one (a new salt)`);
    const input: PlaceOrderInput = {
      ticker: market.ticker,
      side: outcomeOfToken(market, signed.tokenId),
      action: signed.action,
      price: formatTicks(signed.amounts.ticks),
      count: formatLots(signed.amounts.lots),
      time_in_force: signed.timeInForce,
      post_only: signed.postOnly,
      // The order's hash also names it among the account's orders (client_order_id is unique per account).
      client_order_id: signed.signed.orderHash,
      ...(signed.expiration === 0n ? {} : { expiration_ts: String(signed.expiration) }),
      signed: signed.signed,
    };
    return input;
  }
}


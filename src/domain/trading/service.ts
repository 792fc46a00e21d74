import { performance } from 'node:perf_hooks';
import { inTransaction, type Db, type Queryable } from '../../db/knex.js';
import * as feedRepo from '../../db/repositories/feed.js';
import * as repo from '../../db/repositories/trading.js';
import type { MarketResult } from '../../db/rows.js';
import type { AfterCommit } from '../after-commit.js';
import type { MarketSettlement } from '../catalogue/admin.js';
import { conflict, DomainError, invalid, notFound } from '../errors.js';
import { outboxEntries, type BookRemoval, type OutboxEntry, type PlacedOrder } from '../feed/outbox.js';
import { decodeCursor, encodeCursor, splitPage } from '../pagination/cursor.js';
import { Batcher, type Outcome } from './batcher.js';
import { placementRead, planPlacements, type PlacementRequest, type PlacementWrite } from './placement.js';
import { Changeset, liveOrderOf, payoutMicroDots, type CancelReason } from './changes.js';
import {
  formatMoney,
  iso,
  lotsOf,
  marketRefOf,
  microOf,
  orderIdOf,
  pageLimit,
  parseDecreaseCount,
  parsePlacement,
  parseStatuses,
  parseTerms,
  ticksOf,
} from './input.js';
import { formatLots, formatMicroDots, formatTicks, notionalMicroDots, TICKS_PER_DOT } from './money.js';
import type {
  BalanceView,
  BatchCancelItem,
  CursorPage,
  FillView,
  ListOrdersInput,
  OrderbookView,
  OrderView,
  PlaceOrderInput,
  PlacementOutcome,
  PositionView,
  PreviewInput,
  PreviewView,
  SettlementView,
  Trading,
  TradeView,
} from './types.js';

/** What committed trading work did, told to an observer (metrics) once it has committed. */
export interface TradingActivity {
  /** A group commit of placements (placeBatch): how many were asked, how many placed, the transaction's seconds. */
  placed(asked: number, placed: number, seconds: number): void;
  committed(tally: TradingTally): void;
}

/** Trades and cancellations (by reason) of one transaction. */
export interface TradingTally {
  trades: number;
  cancels: Partial<Record<CancelReason, number>>;
}

export interface TradingOptions {
  /** The clock (tests move it); defaults to the system clock. */
  now?: () => Date;
  /** Told what each committed transaction did (none: nothing is counted). */
  activity?: TradingActivity;
  /** Where a failed feed notification (sent after a commit; the listeners catch up later) is reported. */
  onFeedNotifyError?: (error: unknown) => void;
}

/** The real-time feed's records of a trading transaction, written at its end (see transaction()). */
type FeedOutbox = OutboxEntry[];

const UNIQUE_VIOLATION = '23505';
const CLIENT_ORDER_ID_INDEX = 'orders_account_client_order_id_unique';
/** Placements made in one transaction at most (placeBatch); a batch placement (placeOrders) always fits whole. */
const MAX_PLACEMENT_BATCH = 32;
/** Orders one batch placement (placeOrders) may carry. */
export const MAX_ORDERS_PER_BATCH = 20;
/** Markets handled per expiry pass before looking again. */
const EXPIRY_BATCH = 100;

const isLive = (row: { status: string }) => row.status === 'OPEN' || row.status === 'PARTIAL';

/** The order record of an order row (REST responses and the real-time feed's user_orders messages). */
export function orderView(row: Omit<repo.OrderRow, 'sort_created_at'> & { sort_created_at?: string }): OrderView {
  return {
    order_id: row.id,
    market_id: String(row.market_id),
    ticker: row.ticker,
    side: row.side,
    action: row.action,
    type: 'LIMIT',
    time_in_force: row.time_in_force,
    price: formatTicks(ticksOf(row.price)),
    count: formatLots(lotsOf(row.count)),
    fill_count: formatLots(lotsOf(row.filled)),
    remaining_count: formatLots(lotsOf(row.remaining)),
    status: row.status,
    client_order_id: row.client_order_id,
    builder_code: row.builder_code,
    builder_maker_fee_bps: 0,
    builder_taker_fee_bps: 0,
    expiration_ts: row.expiration_ts ? iso(row.expiration_ts) : null,
    post_only: row.post_only,
    reduce_only: row.reduce_only,
    created_at: iso(row.created_at),
    updated_at: iso(row.updated_at),
  };
}

/** Book levels (repo.bookLevels) as the orderbook endpoint and the feed's snapshot show them. */
export function orderbookView(rows: ReadonlyArray<{ book_side: 'bid' | 'ask'; yes_price: string; count: string }>): OrderbookView {
  const levels = rows.map((l) => ({ side: l.book_side, price: ticksOf(l.yes_price), lots: lotsOf(l.count) }));
  const level = (price: number, lots: bigint): [string, string] => [formatTicks(price), formatLots(lots)];
  return {
    // YES bids: the bids, highest first. NO bids: the asks seen from NO (an ask at p is a NO bid at 1 - p), best first.
    yes: levels.filter((l) => l.side === 'bid').sort((a, b) => b.price - a.price).map((l) => level(l.price, l.lots)),
    no: levels.filter((l) => l.side === 'ask').sort((a, b) => a.price - b.price).map((l) => level(TICKS_PER_DOT - l.price, l.lots)),
  };
}

/**
 * Order management, portfolio and market data over the matching engine (book.ts), and the settlement of
 * closed and resolved markets (MarketSettlement, called inside the catalogue's transaction).
 *
 * Concurrency: everything that changes a market's book runs in one transaction holding that market's row
 * lock (repo.lockMarket; several markets: in id order), then locks the balance rows of every account it
 * touches in account order (placements committed together lock every balance row any of them can touch:
 * repo.beginPlacements). Positions of a market change only under its lock. So matching is serialised per
 * market across any number of processes, and transactions never wait on each other in a cycle. Within a
 * process, placements are made one transaction at a time, and those that arrive meanwhile wait in memory
 * and are made together in the next one (placeBatch).
 */
export class TradingService implements Trading, MarketSettlement {
  private readonly now: () => Date;
  private readonly notifier: feedRepo.FeedNotifier;
  private readonly placements = new Batcher<PlacementRequest, OrderView>((items) => this.placeBatch(items), MAX_PLACEMENT_BATCH);
  private readonly activity: TradingActivity | undefined;
  /** Each open transaction's tally, by its outbox (persist adds to it). */
  private readonly tallies = new WeakMap<FeedOutbox, TradingTally>();

  constructor(
    private readonly db: Db,
    options: TradingOptions = {},
  ) {
    this.now = options.now ?? (() => new Date());
    this.activity = options.activity;
    this.notifier = new feedRepo.FeedNotifier(db, options.onFeedNotifyError);
  }

  // --- orders

  async previewOrder(accountId: string, input: PreviewInput): Promise<PreviewView> {
    const terms = parseTerms(input);
    const market = await repo.findMarket(this.db, terms.ticker);
    if (!market) throw notFound(`no market '${terms.ticker}'`);
    if (market.status !== 'ACTIVE') throw conflict(`market '${market.ticker}' is ${market.status}, not ACTIVE`);
    const balance = await repo.findBalance(this.db, accountId);
    const available = balance ? microOf(balance.cash) : 0n;
    const notional = notionalMicroDots(terms.price, terms.lots);
    const buy = terms.action === 'buy';
    let positionAvailable: bigint | undefined;
    if (!buy) {
      const position = await repo.findPosition(this.db, accountId, market.id, terms.side);
      positionAvailable = position ? lotsOf(position.shares) - lotsOf(position.reserved) : 0n;
    }
    const two = (micro: bigint) => formatMicroDots(micro, 2);
    const breakdown = (role: 'maker' | 'taker') => ({
      role,
      platform_fee_bps: 0 as const,
      builder_fee_bps: 0 as const,
      platform_fee: '0.00',
      builder_fee: '0.00',
      total_fee: '0.00',
      cash_required: buy ? two(notional) : '0.00',
      net_proceeds: buy ? '0.00' : two(notional),
    });
    return {
      market_id: String(market.id),
      ticker: market.ticker,
      side: terms.side === 'yes' ? 'YES' : 'NO',
      action: terms.action,
      price: formatTicks(terms.price),
      count: formatLots(terms.lots),
      notional: two(notional),
      reserve_required: buy ? two(notional) : '0.00',
      available_balance: formatMoney(available),
      sufficient_balance: buy ? available >= notional : true,
      position_available: positionAvailable === undefined ? null : formatLots(positionAvailable),
      sufficient_position: positionAvailable === undefined ? null : positionAvailable >= terms.lots,
      platform_taker_fee_bps: 0,
      platform_maker_fee_bps: 0,
      builder_code: terms.builderCode,
      builder_maker_fee_bps: 0,
      builder_taker_fee_bps: 0,
      maker: breakdown('maker'),
      taker: breakdown('taker'),
    };
  }

  async placeOrder(accountId: string, input: PlaceOrderInput): Promise<OrderView> {
    const now = this.now();
    const order = parsePlacement(input, now);
    return this.placements.submit({ accountId, order, now });
  }

  /**
   * Orders of one account placed together: each is checked on its own (one that fails its checks gets its
   * error and is not placed), then the others go to the placement batches together, so that they are made
   * in one transaction (with any placements waiting before them) and come to exactly what placing them one
   * after another, in this order, would (see placeBatch). Outcomes in the order of `inputs`.
   */
  async placeOrders(accountId: string, inputs: readonly PlaceOrderInput[]): Promise<PlacementOutcome[]> {
    if (inputs.length === 0 || inputs.length > MAX_ORDERS_PER_BATCH) throw invalid(`a batch places 1 to ${MAX_ORDERS_PER_BATCH} orders, got ${inputs.length}`);
    const now = this.now();
    const checked = inputs.map((input): { order: PlacementRequest['order'] } | { error: DomainError } => {
      try {
        return { order: parsePlacement(input, now) };
      } catch (error) {
        if (error instanceof DomainError) return { error };
        throw error;
      }
    });
    const placed = await this.placements.submitTogether(checked.flatMap((c) => ('order' in c ? [{ accountId, order: c.order, now }] : [])));
    let next = 0;
    return checked.map((c) => {
      if ('error' in c) return c;
      const outcome = placed[next++]!;
      return 'value' in outcome ? { order: outcome.value } : outcome;
    });
  }

  /**
   * Placements that arrive while others are being made wait, and go together in one transaction (group
   * commit): the markets' locks are taken once and the transaction commits once for all of them (placements
   * on one market are serialised by its lock anyway, so under load this is what lets them go faster than one
   * commit at a time). They are matched one after another in memory against what the transaction read at its
   * start (planPlacements), and written in as few statements as possible. A placement refused by a rule gets
   * its error and leaves the others alone. If the transaction fails as a whole while placing (a write refused
   * by the database: say, one client_order_id placed twice by two processes at once), each placement is made
   * again in a transaction of its own, so that an error reaches only the placement it belongs to.
   */
  private async placeBatch(items: PlacementRequest[]): Promise<Array<Outcome<OrderView>>> {
    if (items.length > 1) {
      // Made again one by one only when the batch failed while placing (so nothing of it committed); a
      // failure after that (the outbox write, the COMMIT itself, whose outcome may be unknown) is every
      // placement's error: placing them again could place them twice.
      let placing = true;
      const placed = await this.placeTogether(items, () => {
        placing = false;
      }).catch((error: unknown) => {
        if (placing) return undefined;
        throw error;
      });
      if (placed) return placed;
    }
    const outcomes: Array<Outcome<OrderView>> = [];
    for (const item of items) {
      const [outcome] = await this.placeTogether([item]).catch((error: { code?: string; constraint?: string }) => {
        // Two placements with one client_order_id racing past the check: the unique index decides.
        if (error.code === UNIQUE_VIOLATION && error.constraint === CLIENT_ORDER_ID_INDEX) {
          return [{ error: conflict(`client_order_id '${item.order.clientOrderId}' is already used by another order of this account`) }];
        }
        return [{ error }];
      });
      outcomes.push(outcome!);
    }
    return outcomes;
  }

  /** Placements in one transaction (see placeBatch); `placed` is called once all their writes are made. */
  private async placeTogether(items: PlacementRequest[], placed?: () => void): Promise<Array<Outcome<OrderView>>> {
    const started = performance.now();
    const { outcomes, inserted } = await this.transaction(async (tx, outbox) => {
      const reads = await repo.beginPlacements(tx, items.map(placementRead));
      const plan = planPlacements(items, reads);
      const balances = new Map(reads.balances.map((r) => [r.user_id, { cash: microOf(r.cash), reserved: microOf(r.reserved) }]));
      const inserted = new Map<string, repo.ChangedOrderRow>();
      for (const write of plan.writes) {
        for (const row of await this.persist(tx, write.changes, balances, write, outbox)) inserted.set(row.id, row);
        for (const [accountId, delta] of write.changes.balances) {
          const balance = balances.get(accountId)!;
          balances.set(accountId, { cash: balance.cash + delta.cash, reserved: balance.reserved + delta.reserved });
        }
      }
      placed?.();
      return { outcomes: plan.outcomes, inserted };
    }, { plansSetByWork: true });
    this.activity?.placed(items.length, inserted.size, (performance.now() - started) / 1000);
    await this.refreshRollups([...new Set(outcomes.flatMap((o) => ('market' in o ? [String(o.market.id)] : [])))]);
    // A new order's row as inserted is its state once placed (a later placement that meets it is written by a later statement).
    return outcomes.map((o) => ('error' in o ? o : { value: orderView({ ...inserted.get(o.orderId)!, ticker: o.market.ticker }) }));
  }

  async listOrders(accountId: string, input: ListOrdersInput): Promise<{ cursor: string | null; orders: OrderView[] }> {
    const limit = pageLimit(input.limit);
    const statuses = parseStatuses(input.status);
    const after = input.cursor ? decodeCursor('orders', input.cursor, ['timestamp', 'uuid']) : undefined;
    const marketId = await this.marketFilter([input.market, input.ticker]);
    if (marketId === null) return { cursor: null, orders: [] };
    const rows = await repo.listOrders(
      this.db,
      accountId,
      { marketId, statuses },
      after ? { createdAt: String(after[0]), id: String(after[1]) } : undefined,
      limit + 1,
    );
    const page = splitPage(rows, limit);
    const last = page.items.at(-1);
    return {
      cursor: page.hasMore && last ? encodeCursor('orders', [last.sort_created_at, last.id]) : null,
      orders: page.items.map(orderView),
    };
  }

  async getOrder(accountId: string, orderId: string): Promise<OrderView> {
    const id = orderIdOf(orderId);
    const row = id ? await repo.findOrder(this.db, accountId, id) : undefined;
    if (!row) throw notFound(`no order '${clip(orderId)}'`);
    return orderView(row);
  }

  async cancelOrder(accountId: string, orderId: string): Promise<void> {
    const [result] = await this.cancelByIds(accountId, [orderId]);
    if (result!.failure === 'not found') throw notFound(`no order '${clip(orderId)}'`);
    if (result!.failure === 'not live') throw conflict(`order '${clip(orderId)}' is not live (already filled or cancelled)`);
  }

  async cancelOrders(accountId: string, orderIds: string[]): Promise<BatchCancelItem[]> {
    const results = await this.cancelByIds(accountId, orderIds);
    return results.map(({ orderId, failure }) => (failure ? { order_id: orderId, error: failure } : { order_id: orderId, status: 'cancelled' as const }));
  }

  async cancelAllOrders(accountId: string, input: { market?: string; ticker?: string }): Promise<{ cancelled: number; market_id: string }> {
    if (input.market !== undefined && input.ticker !== undefined) throw invalid('use market or ticker, not both');
    const ref = input.market ?? input.ticker;
    let scope: string | undefined;
    if (ref !== undefined) {
      const market = await repo.findMarket(this.db, marketRefOf(ref));
      if (!market) throw notFound(`no market '${clip(marketRefOf(ref))}'`);
      scope = String(market.id);
    }
    const marketIds = [...new Set((await repo.findLiveOrdersOfAccount(this.db, accountId, scope)).map((o) => String(o.market_id)))];
    const cancelled = await this.transaction(async (tx, outbox) => {
      await repo.lockMarketsById(tx, marketIds);
      // Again under the locks: only markets locked here, and only orders still live.
      const locked = new Set(marketIds);
      const live = (await repo.findLiveOrdersOfAccount(tx, accountId, scope)).filter((o) => locked.has(String(o.market_id)));
      const changes = new Changeset();
      for (const row of live) changes.cancelResting(liveOrderOf(row), 'requested');
      await this.persist(tx, changes, await this.lockBalances(tx, changes.accounts()), undefined, outbox);
      return live.length;
    });
    await this.refreshRollups(marketIds);
    return { cancelled, market_id: scope ?? '' };
  }

  /**
   * Cancels every live order of the account with `reason` (e.g. 'heartbeat' when its order session expired),
   * inside the caller's transaction `tx`, through the normal cancel path (reserves released, CANCELLED).
   * The caller may already hold rows it locks before any market (an order session's row); from here the
   * usual order holds: the markets of the account's live orders in id order, then the balances. An order
   * placed meanwhile in a market not locked here stays live (it was placed after this cancel). Returns how
   * many were cancelled, and what to pass to `committed` once `tx` has committed.
   */
  async cancelLiveOrdersInTransaction(tx: Queryable, accountId: string, reason: CancelReason): Promise<{ cancelled: number; afterCommit: AfterCommit }> {
    let cancelled = 0;
    const afterCommit = await this.inCallersTransaction(tx, async (outbox) => {
      const marketIds = [...new Set((await repo.findLiveOrdersOfAccount(tx, accountId)).map((o) => String(o.market_id)))];
      await repo.lockMarketsById(tx, marketIds);
      const locked = new Set(marketIds);
      const live = (await repo.findLiveOrdersOfAccount(tx, accountId)).filter((o) => locked.has(String(o.market_id)));
      const changes = new Changeset();
      for (const row of live) changes.cancelResting(liveOrderOf(row), reason);
      await this.persist(tx, changes, await this.lockBalances(tx, changes.accounts()), undefined, outbox);
      cancelled = live.length;
      return marketIds;
    });
    return { cancelled, afterCommit };
  }

  /**
   * Once the caller's transaction has committed: what this service's work in it left to do (the feed's
   * notification, the event rollups of the markets it changed).
   */
  async committed(afterCommit: AfterCommit): Promise<void> {
    this.notifier.notify(afterCommit.notification);
    if (afterCommit.tally) this.activity?.committed(afterCommit.tally as TradingTally);
    await this.refreshRollups(afterCommit.marketIds);
  }

  async decreaseOrder(accountId: string, orderId: string, count: string): Promise<void> {
    const id = orderIdOf(orderId);
    if (!id) throw notFound(`no order '${clip(orderId)}'`);
    const remaining = parseDecreaseCount(count);
    const found = await repo.findOrder(this.db, accountId, id);
    if (!found) throw notFound(`no order '${clip(orderId)}'`);
    await this.transaction(async (tx, outbox) => {
      await repo.lockMarketsById(tx, [String(found.market_id)]);
      const row = (await repo.findOrder(tx, accountId, id))!;
      if (!isLive(row)) throw conflict(`order '${id}' is ${row.status}, not live`);
      const live = liveOrderOf(row);
      if (remaining >= live.remaining) {
        throw invalid(`count must be smaller than the remaining count ${formatLots(live.remaining)}, got ${formatLots(remaining)}`, [
          { location: 'body', path: 'count', message: 'not smaller than the remaining count' },
        ]);
      }
      const changes = new Changeset();
      changes.decreaseResting(live, remaining);
      await this.persist(tx, changes, await this.lockBalances(tx, changes.accounts()), undefined, outbox);
    });
    await this.refreshRollups([String(found.market_id)]);
  }

  /**
   * Cancels every live order whose expiry is at or before `now` (default: the service clock), through the
   * same cancel path as a request (reserves released). Returns how many were cancelled. Safe to run in
   * several processes at once: each market is handled under its row lock, and orders found already
   * cancelled are skipped.
   */
  async expireOrders(now: Date = this.now()): Promise<number> {
    let total = 0;
    const seen = new Set<string>();
    for (;;) {
      const marketIds = (await repo.findMarketsWithExpiredOrders(this.db, now, EXPIRY_BATCH)).map(String).filter((id) => !seen.has(id));
      if (marketIds.length === 0) return total;
      for (const marketId of marketIds) {
        seen.add(marketId);
        total += await this.transaction(async (tx, outbox) => {
          await repo.lockMarketsById(tx, [marketId]);
          const expired = await repo.findExpiredOrdersOfMarket(tx, marketId, now);
          const changes = new Changeset();
          for (const row of expired) changes.cancelResting(liveOrderOf(row), 'expired');
          await this.persist(tx, changes, await this.lockBalances(tx, changes.accounts()), undefined, outbox);
          return expired.length;
        });
        await this.refreshRollups([marketId]);
      }
    }
  }

  // --- portfolio

  async getBalance(accountId: string): Promise<BalanceView> {
    const row = await repo.findBalance(this.db, accountId);
    const cash = row ? microOf(row.cash) : 0n;
    const reserved = row ? microOf(row.reserved) : 0n;
    return { balance: formatMoney(cash + reserved), reserved: formatMoney(reserved), available: formatMoney(cash) };
  }

  async listPositions(accountId: string, input: CursorPage): Promise<{ cursor: string | null; positions: PositionView[] }> {
    const page = await this.idPage('positions', input, (marketId, afterId, limit) => repo.listPositions(this.db, accountId, marketId, afterId, limit));
    return {
      cursor: page.cursor,
      positions: page.items.map((r) => ({
        market_id: String(r.market_id),
        ticker: r.ticker,
        side: r.side,
        count: formatLots(lotsOf(r.shares)),
        available: formatLots(lotsOf(r.shares) - lotsOf(r.reserved)),
        updated_at: iso(r.updated_at),
      })),
    };
  }

  async listFills(accountId: string, input: CursorPage): Promise<{ cursor: string | null; fills: FillView[] }> {
    const page = await this.idPage('fills', input, (marketId, afterId, limit) => repo.listFills(this.db, accountId, marketId, afterId, limit));
    return {
      cursor: page.cursor,
      fills: page.items.map((r) => ({
        fill_id: String(r.id),
        order_id: r.order_id,
        market_id: String(r.market_id),
        ticker: r.ticker,
        side: r.side,
        action: r.action,
        price: formatTicks(ticksOf(r.price)),
        count: formatLots(lotsOf(r.count)),
        role: r.role,
        created_at: iso(r.created_at),
      })),
    };
  }

  async listSettlements(accountId: string, input: CursorPage): Promise<{ cursor: string | null; settlements: SettlementView[] }> {
    const page = await this.idPage('settlements', input, (marketId, afterId, limit) => repo.listSettlements(this.db, accountId, marketId, afterId, limit));
    return {
      cursor: page.cursor,
      settlements: page.items.map((r) => ({
        settlement_id: String(r.id),
        market_id: String(r.market_id),
        ticker: r.ticker,
        result: r.result,
        yes_count: formatLots(lotsOf(r.yes_count)),
        no_count: formatLots(lotsOf(r.no_count)),
        payout: formatMoney(microOf(r.payout)),
        created_at: iso(r.created_at),
      })),
    };
  }

  // --- market data

  async listTrades(input: CursorPage): Promise<{ cursor: string | null; trades: TradeView[] }> {
    const page = await this.idPage('trades', input, (marketId, afterId, limit) => repo.listTrades(this.db, marketId, afterId, limit));
    return {
      cursor: page.cursor,
      trades: page.items.map((r) => {
        const yes = ticksOf(r.yes_price);
        return {
          trade_id: String(r.id),
          market_id: String(r.market_id),
          ticker: r.ticker,
          yes_price: formatTicks(yes),
          no_price: formatTicks(TICKS_PER_DOT - yes),
          count: formatLots(lotsOf(r.count)),
          taker_side: r.taker_side,
          created_at: iso(r.created_at),
        };
      }),
    };
  }

  async getOrderbook(ticker: string): Promise<OrderbookView> {
    const market = await repo.findMarket(this.db, marketRefOf(ticker));
    if (!market) throw notFound(`no market '${clip(marketRefOf(ticker))}'`);
    return orderbookView(await repo.bookLevels(this.db, String(market.id), this.now()));
  }

  // --- settlement (inside the catalogue's close / resolve transaction, which holds the market's row)

  async onMarketClosed(tx: Queryable, marketId: string): Promise<AfterCommit> {
    return this.inCallersTransaction(tx, async (outbox) => {
      const live = await repo.findLiveOrdersOfMarket(tx, marketId);
      const changes = new Changeset();
      for (const row of live) changes.cancelResting(liveOrderOf(row), 'market_closed');
      await this.persist(tx, changes, await this.lockBalances(tx, changes.accounts()), undefined, outbox);
      return [marketId];
    });
  }

  async onMarketResolved(tx: Queryable, marketId: string, result: MarketResult): Promise<AfterCommit> {
    return this.inCallersTransaction(tx, async (outbox) => {
      const live = await repo.findLiveOrdersOfMarket(tx, marketId);
      const holdings = await repo.findHoldingsOfMarket(tx, marketId);
      const changes = new Changeset();
      for (const row of live) changes.cancelResting(liveOrderOf(row), 'market_resolved');

      const perAccount = new Map<string, { yes: bigint; no: bigint }>();
      for (const h of holdings) {
        const entry = perAccount.get(h.account_id) ?? { yes: 0n, no: 0n };
        entry[h.side] += lotsOf(h.shares);
        perAccount.set(h.account_id, entry);
      }
      const balances = await this.lockBalances(tx, [...changes.accounts(), ...perAccount.keys()]);
      const settlementIds = await repo.insertSettlements(
        tx,
        [...perAccount].map(([accountId, held]) => ({
          account_id: accountId,
          market_id: marketId,
          result,
          yes_count: formatLots(held.yes),
          no_count: formatLots(held.no),
          payout: formatMicroDots(payoutMicroDots(result, 'yes', held.yes) + payoutMicroDots(result, 'no', held.no)),
        })),
      );
      let pairs = 0n;
      for (const [accountId, held] of perAccount) {
        changes.pay(accountId, marketId, payoutMicroDots(result, 'yes', held.yes) + payoutMicroDots(result, 'no', held.no), settlementIds.get(accountId)!);
        if (held.yes > 0n) changes.removeShares(accountId, marketId, 'yes', held.yes);
        if (held.no > 0n) changes.removeShares(accountId, marketId, 'no', held.no);
        pairs += held.yes;
      }
      changes.market(marketId).openInterest -= pairs;
      await this.persist(tx, changes, balances, undefined, outbox);
      return [marketId];
    });
  }

  // --- internals

  /**
   * One of this service's own trading transactions: `work` gets the transaction and a list for the feed's
   * outbox entries (persist), written by one statement at its end (several changes of one market, as
   * placements committed together, are numbered in order), and notified once it has committed (nothing
   * if it rolls back), so the transaction does not NOTIFY (which would make commits wait for each other on
   * a global lock).
   */
  private async transaction<T>(work: (tx: Queryable, outbox: FeedOutbox) => Promise<T>, options: { plansSetByWork?: boolean } = {}): Promise<T> {
    const outbox: FeedOutbox = [];
    let notification: string | null = null;
    const result = await inTransaction(this.db, async (tx) => {
      // plansSetByWork: the work's first statement does it (repo.beginPlacements), one round trip fewer.
      if (!options.plansSetByWork) await repo.useTradingPlans(tx);
      const value = await work(tx, outbox);
      notification = await feedRepo.appendFeedRecords(tx, outbox);
      return value;
    });
    this.notifier.notify(notification);
    const tally = this.tallies.get(outbox);
    if (tally) this.activity?.committed(tally);
    return result;
  }

  /**
   * This service's work inside a caller's transaction (settlement, an order session's expiry), with the
   * trading plan settings (which then hold for the rest of that transaction: its statements are keyed too)
   * and the feed's records written at its end, as in transaction(). `work` returns the markets it changed;
   * the caller passes the result to `committed` once it has committed.
   */
  private async inCallersTransaction(tx: Queryable, work: (outbox: FeedOutbox) => Promise<string[]>): Promise<AfterCommit> {
    await repo.useTradingPlans(tx);
    const outbox: FeedOutbox = [];
    const marketIds = await work(outbox);
    return { marketIds, notification: await feedRepo.appendFeedRecords(tx, outbox), tally: this.tallies.get(outbox) };
  }

  /** Resolves once the feed notifications of committed transactions have been sent (before closing the pool). */
  async flushFeedNotifications(): Promise<void> {
    await this.notifier.flush();
  }

  /** Locks these accounts' balance rows (sorted, deduplicated); returns them in exact units. */
  private async lockBalances(tx: Queryable, accountIds: string[]): Promise<Map<string, { cash: bigint; reserved: bigint }>> {
    const rows = await repo.lockBalances(tx, [...new Set(accountIds)].sort());
    return new Map(rows.map((r) => [r.user_id, { cash: microOf(r.cash), reserved: microOf(r.reserved) }]));
  }

  /**
   * Writes a Changeset: maker fills, cancels and decreases of resting orders, trades and fills, positions,
   * balances, the ledger and the markets' figures, and the real-time feed's record of it (`placed`: the
   * order a placement inserted). The balances must have been locked (`balances`); a change that would
   * leave one negative is a bug, reported as such (nothing is written).
   */
  private async persist(
    tx: Queryable,
    changes: Changeset,
    balances: Map<string, { cash: bigint; reserved: bigint }>,
    placements: Pick<PlacementWrite, 'orders' | 'resting'> | undefined,
    outbox: FeedOutbox,
  ): Promise<repo.ChangedOrderRow[]> {
    for (const [accountId, delta] of changes.balances) {
      const before = balances.get(accountId);
      if (!before) throw new Error(`balance of account ${accountId} changes but was not locked`);
      if (before.cash + delta.cash < 0n || before.reserved + delta.reserved < 0n) {
        throw new Error(`account ${accountId} would go negative (cash ${before.cash}${delta.cash}, reserved ${before.reserved}${delta.reserved})`);
      }
    }
    const positions: Array<{ accountId: string; marketId: string; side: 'yes' | 'no'; shares: string; reserved: string }> = [];
    for (const p of changes.positions.values()) {
      if (p.shares === 0n && p.reserved === 0n) continue;
      positions.push({ accountId: p.accountId, marketId: p.marketId, side: p.side, shares: formatLots(p.shares), reserved: formatLots(p.reserved) });
    }
    const markets: repo.TradingWrites['markets'][number][] = [];
    for (const [marketId, m] of changes.markets) {
      if (m.volume === 0n && m.liquidity === 0n && m.openInterest === 0n && m.lastYesPrice === undefined) continue;
      markets.push({
        marketId,
        volume: formatLots(m.volume),
        liquidity: formatMicroDots(m.liquidity),
        openInterest: formatLots(m.openInterest),
        lastYesPrice: m.lastYesPrice === undefined ? undefined : formatTicks(m.lastYesPrice),
        lastNoPrice: m.lastYesPrice === undefined ? undefined : formatTicks(TICKS_PER_DOT - m.lastYesPrice),
      });
    }
    // Every write in one statement (repo.persistChanges).
    const written = await repo.persistChanges(tx, {
      orders: placements?.orders ?? [],
      makerFills: [...changes.makerFills].map(([id, lots]) => ({ id, count: formatLots(lots) })),
      cancels: changes.cancels,
      decreases: changes.decreases.map((d) => ({ id: d.id, remaining: formatLots(d.remaining) })),
      trades: changes.trades.map((t) => ({
        market_id: t.marketId,
        yes_price: formatTicks(t.fill.yesPrice),
        count: formatLots(t.fill.lots),
        taker_side: t.takerSide,
        maker_order_id: t.fill.maker.orderId,
        taker_order_id: t.fill.taker.orderId,
        kind: t.fill.kind,
      })),
      fills: changes.trades.flatMap((t, i) =>
        (['maker', 'taker'] as const).map((role) => {
          const party = t.fill[role];
          return {
            trade: i,
            order_id: party.orderId,
            account_id: party.accountId,
            market_id: t.marketId,
            side: party.side,
            action: party.action,
            price: formatTicks(party.price),
            count: formatLots(t.fill.lots),
            role,
          };
        }),
      ),
      positions,
      balances: [...changes.balances]
        .filter(([, d]) => d.cash !== 0n || d.reserved !== 0n)
        .map(([accountId, d]) => ({ accountId, cash: formatMicroDots(d.cash), reserved: formatMicroDots(d.reserved) })),
      ledger: changes.ledger.map((m) => {
        let reference: string | { trade: number; role: 'maker' | 'taker' };
        if ('order' in m.reference) reference = m.reference.order;
        else if ('settlement' in m.reference) reference = m.reference.settlement;
        else reference = { trade: m.reference.trade, role: m.reference.role };
        return {
          user_id: m.accountId,
          amount: formatMicroDots(m.amount),
          reserved_change: formatMicroDots(m.reservedChange),
          kind: m.kind,
          reference,
          market_id: m.marketId,
        };
      }),
      markets,
    });
    const { tradeIds, fillIds, filled, figures } = written;
    const cancelled: BookRemoval[] = written.cancelled;
    const decreased: BookRemoval[] = written.decreased;
    const placed: PlacedOrder[] = written.placed.map((row) => ({ row, resting: placements!.resting.get(row.id)! }));

    // The real-time feed's outbox record of all this (built from what the writes above returned): written at
    // the end of the transaction, and notified by this process once it has committed (see transaction()).
    outbox.push(...outboxEntries({ changes, tradeIds, fillIds, filled, cancelled, decreased, placed, figures }));
    if (this.activity) {
      let tally = this.tallies.get(outbox);
      if (!tally) this.tallies.set(outbox, (tally = { trades: 0, cancels: {} }));
      tally.trades += changes.trades.length;
      for (const { reason } of changes.cancels) tally.cancels[reason] = (tally.cancels[reason] ?? 0) + 1;
    }
    return written.placed;
  }

  /**
   * Cancels orders by id, in request order, in one transaction: their markets are locked in id order,
   * then each id is cancelled or given its error (unknown, another account's, malformed: not found;
   * no longer live, or named twice: not live).
   */
  private async cancelByIds(accountId: string, orderIds: readonly unknown[]): Promise<Array<{ orderId: string; failure?: 'not found' | 'not live' }>> {
    const ids = orderIds.map((raw) => ({ raw: typeof raw === 'string' ? raw : String(raw), id: orderIdOf(raw) }));
    const wanted = [...new Set(ids.flatMap((i) => (i.id ? [i.id] : [])))];
    const found = await repo.findOrdersOfAccount(this.db, accountId, wanted);
    const marketIds = [...new Set(found.filter(isLive).map((o) => String(o.market_id)))];
    const results = await this.transaction(async (tx, outbox) => {
      await repo.lockMarketsById(tx, marketIds);
      const current = new Map((await repo.findOrdersOfAccount(tx, accountId, wanted)).map((o) => [o.id, o]));
      const locked = new Set(marketIds);
      const done = new Set<string>();
      const changes = new Changeset();
      const out = ids.map(({ raw, id }): { orderId: string; failure?: 'not found' | 'not live' } => {
        const row = id ? current.get(id) : undefined;
        if (!row) return { orderId: raw, failure: 'not found' };
        // Orders only ever leave the live state, so one live now was live before and its market is locked.
        if (!isLive(row) || done.has(row.id) || !locked.has(String(row.market_id))) return { orderId: raw, failure: 'not live' };
        done.add(row.id);
        changes.cancelResting(liveOrderOf(row), 'requested');
        return { orderId: raw };
      });
      await this.persist(tx, changes, await this.lockBalances(tx, changes.accounts()), undefined, outbox);
      return out;
    });
    await this.refreshRollups(marketIds);
    return results;
  }

  /** A page of a collection keyed by a bigint id, newest first, optionally of one market (by ticker or id). */
  private async idPage<T extends { id: string }>(
    collection: string,
    input: CursorPage,
    fetch: (marketId: string | undefined, afterId: string | undefined, limit: number) => Promise<T[]>,
  ): Promise<{ cursor: string | null; items: T[] }> {
    const limit = pageLimit(input.limit);
    const after = input.cursor ? decodeCursor(collection, input.cursor, ['integer']) : undefined;
    const marketId = await this.marketFilter([input.ticker]);
    if (marketId === null) return { cursor: null, items: [] };
    const rows = await fetch(marketId, after ? String(after[0]) : undefined, limit + 1);
    const page = splitPage(rows, limit);
    const last = page.items.at(-1);
    return { cursor: page.hasMore && last ? encodeCursor(collection, [Number(last.id)]) : null, items: page.items };
  }

  /** The one market the given references (tickers or ids; undefined: no filter) name; null when none or different ones. */
  private async marketFilter(refs: Array<string | undefined>): Promise<string | undefined | null> {
    let marketId: string | undefined;
    for (const ref of refs) {
      if (ref === undefined || ref === '') continue;
      const market = await repo.findMarket(this.db, marketRefOf(ref));
      if (!market || (marketId !== undefined && marketId !== String(market.id))) return null;
      marketId = String(market.id);
    }
    return marketId;
  }

  /**
   * Event rollups (volume, liquidity, open interest) follow their markets. Not refreshed on the request
   * path: the markets a committed transaction changed are remembered here, and flushRollups (run every
   * 250 ms by the server's background loop, and when it stops) recomputes their events, once per event
   * however many changes there were. Idempotent, so it is safe with several processes (each refreshes
   * what it committed, after committing it) and a failed refresh is simply retried on the next flush.
   */
  private refreshRollups(marketIds: readonly string[]): Promise<void> {
    for (const id of marketIds) if (id !== '') this.dirtyMarkets.add(id);
    return Promise.resolve();
  }

  private readonly dirtyMarkets = new Set<string>();
  private flushing: Promise<number> | undefined;

  /**
   * Recomputes the event rollups of every market changed since the last flush; returns how many markets
   * that covered. One flush at a time per service (a call during one waits for it, then flushes again).
   */
  async flushRollups(): Promise<number> {
    while (this.flushing) await this.flushing.catch(() => undefined);
    if (this.dirtyMarkets.size === 0) return 0;
    const marketIds = [...this.dirtyMarkets];
    this.dirtyMarkets.clear();
    this.flushing = repo.refreshEventRollups(this.db, marketIds).then(
      () => marketIds.length,
      (error: unknown) => {
        // Not lost: retried on the next flush.
        for (const id of marketIds) this.dirtyMarkets.add(id);
        throw error;
      },
    );
    try {
      return await this.flushing;
    } finally {
      this.flushing = undefined;
    }
  }
}

function clip(value: unknown): string {
  const s = String(value);
  return s.length > 40 ? `${s.slice(0, 40)}...` : s;
}

import { inTransaction, type Db, type Queryable } from '../../db/knex.js';
import { appendFeedRecords, FeedNotifier } from '../../db/repositories/feed.js';
import * as repo from '../../db/repositories/trading.js';
import { outboxEntries, type BookRemoval, type OutboxEntry, type PlacedOrder } from '../feed/outbox.js';
import type { FeedRecord } from '../feed/types.js';
import type { CancelReason, Changeset } from './changes.js';
import { formatLots, formatMicroDots, formatTicks, microOf, TICKS_PER_DOT } from './money.js';
import { insertedRows, type PlacementWrite } from './placement.js';
import type { MarketRollups } from './rollups.js';
import type { BalancesRow, FillRole } from '../../db/tables.js';

/** What committed trading work did, told to an observer (metrics) once it has committed. */
export interface TradingActivity {
  /** A group commit of placements: how many were asked, how many placed, the transaction's seconds. */
  placed(asked: number, placed: number, seconds: number): void;
  committed(tally: TradingTally): void;
}

/** Trades and cancellations (by reason) of one transaction. */
export interface TradingTally {
  trades: number;
  cancels: Partial<Record<CancelReason, number>>;
}

/** Locked balance rows in exact units (micro-Dots), by account. */
export type LockedBalances = Map<string, { cash: bigint; reserved: bigint }>;

/** An order a placement inserted, as its write returned it. */
export type InsertedOrder = Awaited<ReturnType<typeof repo.persistChanges>>['placed'][number];

type MarketWrite = Parameters<typeof repo.persistChanges>[1]['markets'][number];

/** Where a committed transaction's work goes on: the feed's notifier and this process's feed, the market rollups, the observer. */
interface AfterCommitTargets {
  readonly notifier: FeedNotifier;
  readonly published: ((records: readonly FeedRecord[]) => void) | undefined;
  readonly rollups: MarketRollups;
  readonly activity: TradingActivity | undefined;
}

/**
 * The unit of work of trading: one database transaction, and what trading does in it. Commands write
 * through `persist`, which collects the real-time feed's outbox records, the markets whose figures changed
 * and a tally of trades and cancels. At the end of the transaction the outbox is written in one statement
 * (several changes of one market, as placements committed together, numbered in order); once it has
 * committed, and never if it rolled back, `afterCommit` sends the feed's notification, tells the observer
 * and marks the markets for their events' rollups. The transaction never NOTIFYs itself: one that does
 * commits under a global lock, so trading transactions would commit one at a time.
 *
 * Opened by TradingTransactions.run, for trading's own commands and for other services whose transaction
 * includes trading work (catalogue administration settling a market, an order session's expiry); `tx` is
 * theirs to use for their own statements too.
 */
export class TradingTransaction {
  readonly #outbox: OutboxEntry[] = [];
  readonly #markets = new Set<string>();
  #tally: TradingTally | undefined;
  #notification: string | null = null;
  #records: readonly FeedRecord[] = [];
  #plansSet = false;
  #balancesLocked = false;

  constructor(
    readonly tx: Queryable,
    private readonly targets: AfterCommitTargets,
  ) {}

  /**
   * The trading plan settings (repo.useTradingPlans) for the rest of the transaction, once: every command
   * applies them before its first statement (lockMarkets and beginPlacements apply them themselves). Not
   * before: the statements of a service that opened the transaction keep their usual plans.
   */
  async usePlans(): Promise<void> {
    if (this.#plansSet) return;
    this.#plansSet = true;
    await repo.useTradingPlans(this.tx);
  }

  /*
   * The locks, in the one order every trading transaction takes them: the markets whose books it changes, in
   * id order, then the balance rows it changes, in account order (so that transactions taking several never
   * deadlock). A market's book, and its positions, change only under the market's lock: what a command read
   * before locking it, it reads again after. Locking a market once balances are locked is refused.
   */

  /** Locks these markets' rows (in id order), after the plan settings (usePlans). */
  async lockMarkets(marketIds: readonly string[]): Promise<void> {
    this.#beforeBalances();
    await this.usePlans();
    await repo.lockMarketsById(this.tx, marketIds);
  }

  /** Locks these accounts' balance rows (sorted, deduplicated), after any market; returns them in exact units. */
  async lockBalances(accountIds: readonly string[]): Promise<LockedBalances> {
    this.#balancesLocked = true;
    return lockedBalances(await repo.lockBalances(this.tx, [...new Set(accountIds)].sort()));
  }

  /**
   * The start of a group of placements, in one statement (repo.beginPlacements): the plan settings, the
   * markets' locks in id order, the balances of the accounts placing in account order, and what the
   * placements read; with those balances in exact units.
   */
  async beginPlacements(placements: readonly repo.PlacementRead[]): Promise<{ reads: repo.PlacementReads; balances: LockedBalances }> {
    this.#beforeBalances();
    this.#plansSet = true;
    this.#balancesLocked = true;
    const reads = await repo.beginPlacements(this.tx, placements);
    return { reads, balances: lockedBalances(reads.balances) };
  }

  #beforeBalances(): void {
    if (this.#balancesLocked) throw new Error('markets are locked before balances, never after');
  }

  /**
   * Writes a Changeset in one statement (repo.persistChanges): maker fills, cancels and decreases of resting
   * orders, trades and fills, positions, balances, the ledger and the markets' figures; and collects the
   * feed's record of it (`placements`: the orders a placement inserts, with what later placements of the same
   * write did to them folded in: insertedRows). The balances must have been locked (`balances`); a change that
   * would leave one negative is a bug, reported as such (nothing is written). Returns the inserted orders as written.
   */
  async persist(changes: Changeset, balances: LockedBalances, placements?: Pick<PlacementWrite, 'orders' | 'resting'>): Promise<InsertedOrder[]> {
    for (const [accountId, delta] of changes.balances) {
      const before = balances.get(accountId);
      if (!before) throw new Error(`balance of account ${accountId} changes but was not locked`);
      if (before.cash + delta.cash < 0n || before.reserved + delta.reserved < 0n) {
        throw new Error(`account ${accountId} would go negative (cash ${before.cash}${delta.cash}, reserved ${before.reserved}${delta.reserved})`);
      }
    }
    const orders = placements ? insertedRows(placements, changes) : { inserted: [], makerFills: changes.makerFills, cancels: changes.cancels, booked: new Map<string, bigint>() };
    const written = await repo.persistChanges(this.tx, {
      orders: orders.inserted,
      makerFills: [...orders.makerFills].map(([id, lots]) => ({ id, count: formatLots(lots) })),
      cancels: orders.cancels,
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
      positions: [...changes.positions.values()]
        .filter((p) => p.shares !== 0n || p.reserved !== 0n)
        .map((p) => ({ accountId: p.accountId, marketId: p.marketId, side: p.side, shares: formatLots(p.shares), reserved: formatLots(p.reserved) })),
      balances: [...changes.balances]
        .filter(([, d]) => d.cash !== 0n || d.reserved !== 0n)
        .map(([accountId, d]) => ({ accountId, cash: formatMicroDots(d.cash), reserved: formatMicroDots(d.reserved) })),
      ledger: changes.ledger.map((m) => {
        let reference: string | { trade: number; role: FillRole };
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
      markets: marketWrites(changes),
    });
    const { tradeIds, fillIds, filled, figures } = written;
    const cancelled: BookRemoval[] = written.cancelled;
    const decreased: BookRemoval[] = written.decreased;
    const placed: PlacedOrder[] = written.placed.map((row) => ({ row, resting: orders.booked.get(row.id)! }));
    this.#outbox.push(...outboxEntries({ changes, tradeIds, fillIds, filled, cancelled, decreased, placed, figures }));
    for (const marketId of changes.markets.keys()) this.#markets.add(marketId);
    const tally = (this.#tally ??= { trades: 0, cancels: {} });
    tally.trades += changes.trades.length;
    for (const { reason } of changes.cancels) tally.cancels[reason] = (tally.cancels[reason] ?? 0) + 1;
    return written.placed;
  }

  /** The end of the transaction, inside it: the feed's outbox records, in one statement. */
  async close(): Promise<void> {
    const appended = await appendFeedRecords(this.tx, this.#outbox);
    this.#notification = appended.notification;
    this.#records = appended.records;
  }

  /**
   * Once the transaction has committed: the feed's notification (for every process) and its records to this
   * process's feed (which need not wait for the notification and read them back), the observer's tally (when
   * anything was persisted), the rollups (events and candles) of the markets whose figures changed.
   */
  afterCommit(): void {
    const { notifier, published, rollups, activity } = this.targets;
    notifier.notify(this.#notification);
    if (this.#records.length > 0) published?.(this.#records);
    if (this.#tally) activity?.committed(this.#tally);
    rollups.mark(this.#markets);
  }
}

const lockedBalances = (rows: ReadonlyArray<Pick<BalancesRow, 'user_id' | 'cash' | 'reserved'>>): LockedBalances =>
  new Map(rows.map((r) => [r.user_id, { cash: microOf(r.cash), reserved: microOf(r.reserved) }]));

/** The markets' figures a Changeset changes (those it leaves as they were are not written). */
function marketWrites(changes: Changeset): MarketWrite[] {
  const markets: MarketWrite[] = [];
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
  return markets;
}

export interface TradingTransactionOptions {
  /** Told what each committed transaction did (none: nothing is counted). */
  activity?: TradingActivity;
  /** Where a failed feed notification (sent after a commit; the listeners catch up later) is reported. */
  onFeedNotifyError?: (error: unknown) => void;
  /** Given the feed records of each committed transaction, in commit order (this process's feed: FeedService.committed). */
  publishFeedRecords?: (records: readonly FeedRecord[]) => void;
}

/** Opens the trading transactions of one process, and holds what their after-commit work goes to. */
export class TradingTransactions {
  readonly activity: TradingActivity | undefined;
  readonly #targets: AfterCommitTargets;

  constructor(
    readonly db: Db,
    readonly rollups: MarketRollups,
    options: TradingTransactionOptions = {},
  ) {
    this.activity = options.activity;
    this.#targets = { notifier: new FeedNotifier(db, options.onFeedNotifyError), published: options.publishFeedRecords, rollups, activity: options.activity };
  }

  /**
   * Runs `work` in a new database transaction, as one TradingTransaction: all of it commits or none of it;
   * the after-commit work follows a commit, before this resolves.
   */
  async run<T>(work: (transaction: TradingTransaction) => Promise<T>): Promise<T> {
    let transaction: TradingTransaction | undefined;
    const value = await inTransaction(this.db, async (tx) => {
      transaction = new TradingTransaction(tx, this.#targets);
      const result = await work(transaction);
      await transaction.close();
      return result;
    });
    transaction!.afterCommit();
    return value;
  }

  /** Resolves once the feed notifications of committed transactions have been sent (before closing the pool). */
  flushNotifications(): Promise<void> {
    return this.#targets.notifier.flush();
  }
}

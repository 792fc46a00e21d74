import * as repo from '../../../db/repositories/trading.js';
import { clip, conflict, invalid, notFound } from '../../errors.js';
import { Changeset, liveOrderOf, type CancelReason } from '../changes.js';
import { marketRefOf } from '../../catalogue/names.js';
import { orderIdOf } from '../input.js';
import type { TradingTransaction, TradingTransactions } from '../transaction.js';
import type { BatchCancelItem } from '../views.js';

/**
 * Cancelling resting orders: their reserves are released and they become CANCELLED with a reason. Each
 * cancel locks the markets of the orders it cancels, then the balances it changes (TradingTransaction's
 * locks), and reads the orders again under the markets' locks.
 */

/** An order that can still trade (and be cancelled or decreased). */
export const isLive = (row: { status: string }) => row.status === 'OPEN' || row.status === 'PARTIAL';

type CancelResult = { orderId: string; failure?: 'not found' | 'not live' };

export async function cancelOrder(transactions: TradingTransactions, accountId: string, orderId: string): Promise<void> {
  const [result] = await cancelByIds(transactions, accountId, [orderId]);
  if (result!.failure === 'not found') throw notFound(`no order '${clip(orderId, 40)}'`);
  if (result!.failure === 'not live') throw conflict(`order '${clip(orderId, 40)}' is not live (already filled or cancelled)`);
}

export async function cancelOrders(transactions: TradingTransactions, accountId: string, orderIds: string[]): Promise<BatchCancelItem[]> {
  const results = await cancelByIds(transactions, accountId, orderIds);
  return results.map(({ orderId, failure }) => (failure ? { order_id: orderId, error: failure } : { order_id: orderId, status: 'cancelled' as const }));
}

/** Every live order of the account, in one market (`market`: id or ticker, or `ticker`) or in all of them. */
export async function cancelAllOrders(
  transactions: TradingTransactions,
  accountId: string,
  input: { market?: string; ticker?: string },
): Promise<{ cancelled: number; market_id: string }> {
  if (input.market !== undefined && input.ticker !== undefined) throw invalid('use market or ticker, not both');
  const { db } = transactions;
  const ref = input.market ?? input.ticker;
  let scope: string | undefined;
  if (ref !== undefined) {
    const market = await repo.findMarket(db, marketRefOf(ref));
    if (!market) throw notFound(`no market '${clip(marketRefOf(ref), 40)}'`);
    scope = String(market.id);
  }
  const marketIds = [...new Set((await repo.findLiveOrdersOfAccount(db, accountId, scope)).map((o) => String(o.market_id)))];
  const cancelled = await transactions.run(async (transaction) => {
    await transaction.lockMarkets(marketIds);
    // Again under the locks: only markets locked here, and only orders still live.
    const locked = new Set(marketIds);
    const live = (await repo.findLiveOrdersOfAccount(transaction.tx, accountId, scope)).filter((o) => locked.has(String(o.market_id)));
    return cancelRows(transaction, live, 'requested');
  });
  return { cancelled, market_id: scope ?? '' };
}

/**
 * Cancels every live order of the account with `reason` (e.g. 'heartbeat' when its order session expired)
 * in a transaction another service opened, through the normal cancel path. That service may already hold
 * rows it locks before any market (an order session's row); from here the usual order holds: the markets
 * of the account's live orders in id order, then the balances. An order placed meanwhile in a market not
 * locked here stays live (it was placed after this cancel). Returns how many were cancelled.
 */
export async function cancelAccountOrders(transaction: TradingTransaction, accountId: string, reason: CancelReason): Promise<number> {
  await transaction.usePlans();
  const { tx } = transaction;
  const marketIds = [...new Set((await repo.findLiveOrdersOfAccount(tx, accountId)).map((o) => String(o.market_id)))];
  await transaction.lockMarkets(marketIds);
  const locked = new Set(marketIds);
  const live = (await repo.findLiveOrdersOfAccount(tx, accountId)).filter((o) => locked.has(String(o.market_id)));
  return cancelRows(transaction, live, reason);
}

/** Cancels these live orders (their markets locked) with `reason`; returns how many. */
export async function cancelRows(
  transaction: TradingTransaction,
  rows: ReadonlyArray<Parameters<typeof liveOrderOf>[0]>,
  reason: CancelReason,
): Promise<number> {
  const changes = new Changeset();
  for (const row of rows) changes.cancelResting(liveOrderOf(row), reason);
  await transaction.persist(changes, await transaction.lockBalances(changes.accounts()));
  return rows.length;
}

/**
 * Cancels orders by id, in request order, in one transaction: their markets are locked in id order, then
 * each id is cancelled or given its error (unknown, another account's, malformed: not found; no longer
 * live, or named twice: not live).
 */
async function cancelByIds(transactions: TradingTransactions, accountId: string, orderIds: readonly unknown[]): Promise<CancelResult[]> {
  const ids = orderIds.map((raw) => ({ raw: typeof raw === 'string' ? raw : String(raw), id: orderIdOf(raw) }));
  const wanted = [...new Set(ids.flatMap((i) => (i.id ? [i.id] : [])))];
  const marketIds = await repo.findMarketsOfLiveOrders(transactions.db, accountId, wanted);
  return transactions.run(async (transaction) => {
    await transaction.lockMarkets(marketIds);
    const current = new Map((await repo.findOrdersOfAccount(transaction.tx, accountId, wanted)).map((o) => [o.id, o]));
    const locked = new Set(marketIds);
    const done = new Set<string>();
    const changes = new Changeset();
    const results = ids.map(({ raw, id }): CancelResult => {
      const row = id ? current.get(id) : undefined;
      if (!row) return { orderId: raw, failure: 'not found' };
      // Orders only ever leave the live state, so one live now was live before and its market is locked.
      if (!isLive(row) || done.has(row.id) || !locked.has(String(row.market_id))) return { orderId: raw, failure: 'not live' };
      done.add(row.id);
      changes.cancelResting(liveOrderOf(row), 'requested');
      return { orderId: raw };
    });
    await transaction.persist(changes, await transaction.lockBalances(changes.accounts()));
    return results;
  });
}

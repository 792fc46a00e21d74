import * as repo from '../../../db/repositories/trading.js';
import type { TradingTransactions } from '../transaction.js';
import { cancelRows } from './cancel.js';

/** Markets handled per expiry pass before looking again. */
const EXPIRY_BATCH = 100;

/**
 * Cancels every live order whose expiry is at or before `now`, through the same cancel path as a request
 * (reserves released, reason 'expired'), one market per transaction. Returns how many were cancelled. Safe
 * to run in several processes at once: each market is handled under its row lock, and orders found
 * already cancelled are skipped.
 */
export async function expireOrders(transactions: TradingTransactions, now: Date): Promise<number> {
  let total = 0;
  const seen = new Set<string>();
  for (;;) {
    const marketIds = (await repo.findMarketsWithExpiredOrders(transactions.db, now, EXPIRY_BATCH)).map(String).filter((id) => !seen.has(id));
    if (marketIds.length === 0) return total;
    for (const marketId of marketIds) {
      seen.add(marketId);
      total += await transactions.run(async (transaction) => {
        await transaction.lockMarkets([marketId]);
        return cancelRows(transaction, await repo.findExpiredOrdersOfMarket(transaction.tx, marketId, now), 'expired');
      });
    }
  }
}

import * as repo from '../../../db/repositories/trading.js';
import { clip, conflict, invalid, notFound } from '../../errors.js';
import { Changeset, liveOrderOf } from '../changes.js';
import { orderIdOf, parseDecreaseCount } from '../input.js';
import { formatLots } from '../money.js';
import type { TradingTransactions } from '../transaction.js';
import { isLive } from './cancel.js';

/**
 * Lowers a live order's remaining count to `count` (smaller than the current one, on the 0.0001 quantum),
 * releasing the reserve of the difference; the order keeps its place in the book.
 */
export async function decreaseOrder(transactions: TradingTransactions, accountId: string, orderId: string, count: string): Promise<void> {
  const id = orderIdOf(orderId);
  if (!id) throw notFound(`no order '${clip(orderId, 40)}'`);
  const remaining = parseDecreaseCount(count);
  const found = await repo.findOrder(transactions.db, accountId, id);
  if (!found) throw notFound(`no order '${clip(orderId, 40)}'`);
  await transactions.run(async (transaction) => {
    await transaction.lockMarkets([String(found.market_id)]);
    const row = (await repo.findOrder(transaction.tx, accountId, id))!;
    if (!isLive(row)) throw conflict(`order '${id}' is ${row.status}, not live`);
    const live = liveOrderOf(row);
    if (remaining >= live.remaining) {
      throw invalid(`count must be smaller than the remaining count ${formatLots(live.remaining)}, got ${formatLots(remaining)}`, [
        { location: 'body', path: 'count', message: 'not smaller than the remaining count' },
      ]);
    }
    const changes = new Changeset();
    changes.decreaseResting(live, remaining);
    await transaction.persist(changes, await transaction.lockBalances(changes.accounts()));
  });
}

import * as repo from '../../../db/repositories/trading.js';
import { Changeset, liveOrderOf, payoutMicroDots } from '../changes.js';
import { formatLots, formatMicroDots, lotsOf } from '../money.js';
import type { TradingTransaction } from '../transaction.js';
import { cancelRows } from './cancel.js';
import type { MarketResult } from '../../../db/tables.js';

/**
 * What happens to a market's resting orders and positions when the catalogue closes or resolves it, in
 * the catalogue's transaction, which already holds the market's row (and its event's).
 */

/** A closed market trades no more: its resting orders are cancelled ('market_closed'). */
export async function settleClosedMarket(transaction: TradingTransaction, marketId: string): Promise<void> {
  await transaction.usePlans();
  await cancelRows(transaction, await repo.findLiveOrdersOfMarket(transaction.tx, marketId), 'market_closed');
}

/**
 * A resolved market: its resting orders are cancelled ('market_resolved'), and every holder is paid for
 * its shares (1 Dot per winning share, 0.50 per share of either side on `invalid`), which are removed; a
 * settlement row per account records what it held and was paid.
 */
export async function settleResolvedMarket(transaction: TradingTransaction, marketId: string, result: MarketResult): Promise<void> {
  await transaction.usePlans();
  const { tx } = transaction;
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
  const payout = (held: { yes: bigint; no: bigint }) => payoutMicroDots(result, 'yes', held.yes) + payoutMicroDots(result, 'no', held.no);
  const balances = await transaction.lockBalances([...changes.accounts(), ...perAccount.keys()]);
  const settlementIds = await repo.insertSettlements(
    tx,
    [...perAccount].map(([accountId, held]) => ({
      account_id: accountId,
      market_id: marketId,
      result,
      yes_count: formatLots(held.yes),
      no_count: formatLots(held.no),
      payout: formatMicroDots(payout(held)),
    })),
  );
  let pairs = 0n;
  for (const [accountId, held] of perAccount) {
    changes.pay(accountId, marketId, payout(held), settlementIds.get(accountId)!);
    if (held.yes > 0n) changes.removeShares(accountId, marketId, 'yes', held.yes);
    if (held.no > 0n) changes.removeShares(accountId, marketId, 'no', held.no);
    pairs += held.yes;
  }
  changes.market(marketId).openInterest -= pairs;
  await transaction.persist(changes, balances);
}

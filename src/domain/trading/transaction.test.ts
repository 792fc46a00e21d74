import { describe, expect, it } from 'vitest';
import type { Queryable } from '../../db/knex.js';
import { TradingTransaction } from './transaction.js';

// No balance to lock reaches no statement, and a refused lock is refused before its first one: no database here.
const transaction = () => new TradingTransaction({} as Queryable, {} as never);

describe('TradingTransaction locks', () => {
  it('refuses to lock markets once balances are locked', async () => {
    const t = transaction();
    await t.lockBalances([]);
    await expect(t.lockMarkets(['1'])).rejects.toThrow('markets are locked before balances, never after');
  });

  it('refuses to begin placements once balances are locked', async () => {
    const t = transaction();
    await t.lockBalances([]);
    await expect(t.beginPlacements([])).rejects.toThrow('markets are locked before balances, never after');
  });
});

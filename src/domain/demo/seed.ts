import type { Db } from '../../db/knex.js';
import { isCatalogueEmpty, withSeedLock } from '../../db/repositories/seed.js';
import { generateCatalogue } from '../../db/seed/generator.js';
import type { AccountService } from '../accounts/service.js';

/** Accounts of the demo data; they created its events. Documented in the README and docs/operations.md (SEED). */
export const DEMO_ACCOUNTS = [
  { email: 'alice@demo.dots', name: 'Alice Maker', username: 'alice' },
  { email: 'bob@demo.dots', name: 'Bob Trader', username: 'bob' },
  { email: 'carol@demo.dots', name: 'Carol Analyst', username: 'carol' },
] as const;
export const DEMO_PASSWORD = 'demo-password';

/**
 * `SEED=demo`: on an empty catalogue, demo accounts and a living catalogue (dozens of series over every
 * category and recurrence, hundreds of events, markets with prices and volume, tags, comments).
 * Returns whether anything was seeded.
 */
export async function seedDemo(db: Db, accounts: AccountService): Promise<boolean> {
  return withSeedLock(db, async () => {
    if (!(await isCatalogueEmpty(db))) return false;
    const creatorIds: string[] = [];
    for (const demo of DEMO_ACCOUNTS) {
      const { account } = await accounts.register({ ...demo, password: DEMO_PASSWORD });
      creatorIds.push(account.id);
    }
    await generateCatalogue(db, { events: 480, eventsPerSeries: 12, marketsPerEvent: 3, creatorIds, commentsPerMarket: 2 });
    return true;
  });
}

import { randomBytes } from 'node:crypto';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { CatalogueAdminService } from '../../src/domain/catalogue/admin.js';
import { DomainError } from '../../src/domain/errors.js';
import type { TradingService } from '../../src/domain/trading/service.js';
import type { Services } from '../../src/services.js';
import { checkTradingInvariants } from '../support/invariants.js';
import { TestService } from '../support/service.js';

/**
 * Conservation of Dots, property-tested: random sequences of
 * placements (some concurrent, some in batches), cancels, batch and market cancels, decreases, expiries, closes and
 * resolutions by several accounts on a few markets. After each sequence, summed from the database:
 *   sum(cash) + sum(reserved) + 1 Dot per outstanding YES+NO pair of unresolved markets = all grants,
 * and nothing negative, no order over- or under-accounted, no book crossed, every reserve and market
 * figure equal to what the orders and positions say, every account's ledger summing to its balance.
 */

const ACCOUNTS = 4;
const MARKETS = 2;
const RUNS = 30;
const STEPS = 30;

let api: TestService;
let services: Services;
let trading: TradingService;
let catalogue: CatalogueAdminService;
const accounts: string[] = [];
let runs = 0;

beforeAll(async () => {
  api = await TestService.start();
  services = api.service.services;
  trading = services.trading;
  catalogue = services.catalogueAdmin;
  for (let i = 0; i < ACCOUNTS; i++) {
    const { account } = await services.accounts.register({ email: `c-${randomBytes(5).toString('hex')}@example.com`, password: 'correct-horse-battery' });
    accounts.push(account.id);
  }
  await catalogue.createSeries({ ticker: 'CONS', title: 'Conservation', category: 'tests', frequency: 'daily' });
});
afterAll(() => api.stop());

type Place = { kind: 'place'; a: number; m: number; side: 'yes' | 'no'; action: 'buy' | 'sell'; price: number; count: string; tif: 'GTC' | 'IOC' | 'FOK'; postOnly: boolean; expires: boolean };
type Command =
  | Place
  | { kind: 'parallel'; orders: Place[] }
  | { kind: 'placeBatch'; a: number; orders: Place[] }
  | { kind: 'cancel'; a: number; k: number }
  | { kind: 'batch'; a: number; ks: number[] }
  | { kind: 'cancelAll'; a: number; m: number | null }
  | { kind: 'decrease'; a: number; k: number; tenths: number }
  | { kind: 'expire' }
  | { kind: 'close'; m: number }
  | { kind: 'resolve'; m: number; result: 'yes' | 'no' | 'invalid' };

const account = fc.integer({ min: 0, max: ACCOUNTS - 1 });
const market = fc.integer({ min: 0, max: MARKETS - 1 });
const placeArb: fc.Arbitrary<Place> = fc.record({
  kind: fc.constant('place' as const),
  a: account,
  m: market,
  side: fc.constantFrom('yes' as const, 'no' as const),
  action: fc.constantFrom('buy' as const, 'buy' as const, 'sell' as const),
  // Mostly near the middle so that orders meet (a YES buy at p meets a NO buy at q when p + q >= 1); sometimes anywhere.
  price: fc.oneof({ weight: 5, arbitrary: fc.integer({ min: 42, max: 62 }) }, { weight: 1, arbitrary: fc.integer({ min: 1, max: 99 }) }),
  count: fc.oneof(
    fc.integer({ min: 1, max: 30 }).map(String),
    fc.integer({ min: 1, max: 99_999 }).map((lots) => (lots / 10_000).toFixed(4)),
  ),
  tif: fc.oneof({ weight: 6, arbitrary: fc.constant('GTC' as const) }, { weight: 1, arbitrary: fc.constant('IOC' as const) }, { weight: 1, arbitrary: fc.constant('FOK' as const) }),
  postOnly: fc.oneof({ weight: 1, arbitrary: fc.constant(true) }, { weight: 6, arbitrary: fc.constant(false) }),
  expires: fc.oneof({ weight: 1, arbitrary: fc.constant(true) }, { weight: 4, arbitrary: fc.constant(false) }),
});
const closeArb = fc.record({ kind: fc.constant('close' as const), m: market });
const resolveArb = fc.record({ kind: fc.constant('resolve' as const), m: market, result: fc.constantFrom('yes' as const, 'no' as const, 'invalid' as const) });
const lifecycleArb: fc.Arbitrary<Command> = fc.oneof({ weight: 1, arbitrary: closeArb }, { weight: 3, arbitrary: resolveArb });
const commandArb: fc.Arbitrary<Command> = fc.oneof(
  { weight: 20, arbitrary: placeArb },
  { weight: 3, arbitrary: fc.record({ kind: fc.constant('parallel' as const), orders: fc.array(placeArb, { minLength: 2, maxLength: 5 }) }) },
  { weight: 2, arbitrary: fc.record({ kind: fc.constant('placeBatch' as const), a: account, orders: fc.array(placeArb, { minLength: 1, maxLength: 8 }) }) },
  { weight: 2, arbitrary: fc.record({ kind: fc.constant('cancel' as const), a: account, k: fc.nat(20) }) },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant('batch' as const), a: account, ks: fc.array(fc.nat(20), { maxLength: 4 }) }) },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant('cancelAll' as const), a: account, m: fc.option(market, { nil: null }) }) },
  { weight: 2, arbitrary: fc.record({ kind: fc.constant('decrease' as const), a: account, k: fc.nat(20), tenths: fc.integer({ min: 1, max: 9 }) }) },
  { weight: 1, arbitrary: fc.constant({ kind: 'expire' as const }) },
);
/** Trading, then (usually) closes and resolutions at the end, so that markets live long enough to trade. */
const sequenceArb: fc.Arbitrary<Command[]> = fc
  .tuple(fc.array(commandArb, { minLength: STEPS / 2, maxLength: STEPS - 3, size: 'max' }), fc.array(lifecycleArb, { maxLength: 3 }))
  .map(([trading, lifecycle]) => [...trading, ...lifecycle]);

async function newMarkets(): Promise<string[]> {
  runs += 1;
  const event = `CONS-E${runs}`;
  await catalogue.createEvent({ event_ticker: event, series_ticker: 'CONS', title: `Run ${runs}`, strike_date: '2030-01-01T00:00:00Z' }, accounts[0]!);
  const tickers: string[] = [];
  for (let m = 0; m < MARKETS; m++) {
    const ticker = `CONS-${runs}-${m}`;
    await catalogue.createMarket({ ticker, event_ticker: event, title: ticker });
    tickers.push(ticker);
  }
  return tickers;
}

async function liveOrderIds(accountId: string): Promise<string[]> {
  const rows = await api.db('orders').where({ account_id: accountId }).whereIn('status', ['OPEN', 'PARTIAL']).orderBy('sequence').select('id');
  return rows.map((r: { id: string }) => r.id);
}

/** Unreserved shares (lots) of each side an account holds in a market. */
async function heldShares(accountId: string, ticker: string): Promise<{ yes: number; no: number }> {
  const rows = await api.db('positions as p').join('markets as m', 'm.id', 'p.market_id').where({ 'p.account_id': accountId, 'm.ticker': ticker }).select('p.side', 'p.shares', 'p.reserved');
  const held = { yes: 0, no: 0 };
  for (const r of rows as Array<{ side: 'yes' | 'no'; shares: string; reserved: string }>) held[r.side] = Math.round((Number(r.shares) - Number(r.reserved)) * 10_000);
  return held;
}

/** Runs one command; refusals (DomainError: 400, 404, 409) are legitimate outcomes, anything else is a failure. */
async function run(command: Command, tickers: string[]): Promise<void> {
  const refused = (error: unknown) => {
    if (!(error instanceof DomainError)) throw error;
  };
  /** What a placement asks for, and by whom (`fixedAccount`: that account's, as in a batch placement). */
  const placementOf = async (p: Place, fixedAccount?: number) => {
    let { side, count } = p;
    let a = fixedAccount ?? p.a;
    if (p.action === 'sell') {
      // Sell what is held, so that transfers and merges happen (and sometimes more than is held: refused):
      // the first account from `a` on holding shares in the market sells.
      let held = await heldShares(accounts[a]!, tickers[p.m]!);
      for (let i = 1; fixedAccount === undefined && i < ACCOUNTS && held.yes === 0 && held.no === 0; i++) {
        const next = (p.a + i) % ACCOUNTS;
        const theirs = await heldShares(accounts[next]!, tickers[p.m]!);
        if (theirs.yes > 0 || theirs.no > 0) [a, held] = [next, theirs];
      }
      if (held[side] === 0 && held[side === 'yes' ? 'no' : 'yes'] > 0) side = side === 'yes' ? 'no' : 'yes';
      if (held[side] > 0 && held[side] < Number(count) && p.price % 4 !== 0) count = (held[side] / 10_000).toFixed(4);
    }
    return {
      accountId: accounts[a]!,
      input: {
        ticker: tickers[p.m]!,
        side,
        action: p.action,
        // Sellers ask for the mirror of the buyers' prices, so that their orders meet bids (transfers) and each other (merges).
        price: ((p.action === 'sell' ? 100 - p.price : p.price) / 100).toFixed(2),
        count,
        time_in_force: p.tif,
        post_only: p.postOnly,
        expiration_ts: p.expires ? new Date(Date.now() + 3600_000).toISOString() : undefined,
      },
    };
  };
  const placeOne = async (p: Place) => {
    const { accountId, input } = await placementOf(p);
    return trading.placeOrder(accountId, input).then(() => undefined, refused);
  };
  switch (command.kind) {
    case 'place':
      return placeOne(command);
    case 'parallel':
      await Promise.all(command.orders.map(placeOne));
      return;
    case 'placeBatch': {
      // One account's orders in one batch: each placed or refused on its own (a refusal is a DomainError in its position).
      const placements = await Promise.all(command.orders.map((p) => placementOf(p, command.a)));
      const outcomes = await trading.placeOrders(accounts[command.a]!, placements.map((p) => p.input));
      expect(outcomes).toHaveLength(placements.length);
      for (const o of outcomes) if ('error' in o) refused(o.error);
      return;
    }
    case 'cancel': {
      const ids = await liveOrderIds(accounts[command.a]!);
      if (ids.length === 0) return;
      return trading.cancelOrder(accounts[command.a]!, ids[command.k % ids.length]!).catch(refused);
    }
    case 'batch': {
      const ids = await liveOrderIds(accounts[command.a]!);
      const chosen = command.ks.map((k) => ids[k % Math.max(ids.length, 1)] ?? 'missing');
      const results = await trading.cancelOrders(accounts[command.a]!, chosen);
      expect(results.map((r) => r.order_id)).toEqual(chosen);
      return;
    }
    case 'cancelAll':
      await trading.cancelAllOrders(accounts[command.a]!, command.m === null ? {} : { ticker: tickers[command.m]! });
      return;
    case 'decrease': {
      const ids = await liveOrderIds(accounts[command.a]!);
      if (ids.length === 0) return;
      const order = await trading.getOrder(accounts[command.a]!, ids[command.k % ids.length]!);
      const lots = Math.floor((Number(order.remaining_count) * 10_000 * command.tenths) / 10);
      return trading.decreaseOrder(accounts[command.a]!, order.order_id, (lots / 10_000).toFixed(4)).catch(refused);
    }
    case 'expire':
      await trading.expireOrders(new Date(Date.now() + 2 * 3600_000));
      return;
    case 'close':
      await catalogue.closeMarket(tickers[command.m]!).catch(refused);
      return;
    case 'resolve':
      await catalogue.resolveMarket(tickers[command.m]!, command.result).catch(refused);
      return;
  }
}

describe('conservation of Dots', () => {
  it(
    'holds after any sequence of trading, cancelling, expiring, closing and resolving',
    async () => {
      await fc.assert(
        fc.asyncProperty(sequenceArb, async (commands) => {
          const tickers = await newMarkets();
          for (const command of commands) await run(command, tickers);
          await checkTradingInvariants(api.db);
        }),
        { numRuns: RUNS, endOnFailure: true },
      );
      // Trading really happened: something filled, minted, merged and settled over the runs.
      const [kinds] = (await api.db.raw(`select count(*) filter (where kind = 'mint') as mint, count(*) filter (where kind = 'merge') as merge, count(*) filter (where kind like 'transfer%') as transfer, count(*) as trades from trades`)).rows;
      expect(Number(kinds.trades)).toBeGreaterThan(30);
      expect(Number(kinds.mint)).toBeGreaterThan(0);
      expect(Number(kinds.transfer) + Number(kinds.merge)).toBeGreaterThan(0);
      const [settled] = (await api.db.raw(`select count(*) as n from settlements`)).rows;
      expect(Number(settled.n)).toBeGreaterThan(0);
    },
    120_000,
  );
});

/* eslint max-lines: ["error", { "max": 850, "skipBlankLines": true, "skipComments": true }] -- its cases share one running service (an embedded PostgreSQL) and its fixtures: a split would start another */
import { randomUUID } from 'node:crypto';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { CatalogueAdminService } from '../../src/domain/catalogue/admin.js';
import { DomainError, type DomainErrorCode } from '../../src/domain/errors.js';
import type { TradingService } from '../../src/domain/trading/service.js';
import type { PlaceOrderInput } from '../../src/domain/trading/types.js';
import type { Queryable } from '../../src/db/knex.js';
import { beginPlacements } from '../../src/db/repositories/trading.js';
import type { Services } from '../../src/services.js';
import { TestService } from '../support/service.js';

/**
 * TradingService driven directly (no HTTP) against the real PostgreSQL of the integration harness. Every
 * account starts with 1000 Dots.
 */

let api: TestService;
let services: Services;
let trading: TradingService;
let catalogue: CatalogueAdminService;
let creatorId: string;
let markets = 0;

beforeAll(async () => {
  api = await TestService.start();
  services = api.service.services;
  trading = services.trading;
  catalogue = services.catalogueAdmin;
  creatorId = await newAccount();
  await catalogue.createSeries({ ticker: 'TRD', title: 'Trading tests', category: 'tests', frequency: 'daily' });
});
afterAll(() => api.stop());

async function newAccount(): Promise<string> {
  return (await api.account()).user.id;
}

async function newMarket(): Promise<{ id: string; ticker: string; event: string }> {
  markets += 1;
  const event = `TRD-E${markets}`;
  const ticker = `TRD-M${markets}`;
  await catalogue.createEvent({ event_ticker: event, series_ticker: 'TRD', title: `Event ${markets}`, strike_date: '2030-01-01T00:00:00Z' }, creatorId);
  const market = await catalogue.createMarket({ ticker, event_ticker: event, title: `Market ${markets}` });
  return { id: String(market.id), ticker, event };
}

async function fails(promise: Promise<unknown>, code: DomainErrorCode, message?: RegExp | string): Promise<DomainError> {
  const error = await promise.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(error, 'expected a DomainError').toBeInstanceOf(DomainError);
  expect((error as DomainError).code).toBe(code);
  if (message !== undefined) expect((error as DomainError).message).toMatch(message);
  return error as DomainError;
}

const place = (account: string, ticker: string, order: Omit<PlaceOrderInput, 'ticker'>) => trading.placeOrder(account, { ticker, ...order });
const balance = (account: string) => trading.getBalance(account);
const marketRow = (id: string) => api.db('markets').where({ id }).first();

/** Holdings and reserves of each side, as strings ("0" when there is no row). */
async function position(account: string, marketId: string) {
  const rows = await api.db('positions').where({ account_id: account, market_id: marketId });
  const of = (side: string) => rows.find((r) => r.side === side);
  const shares = (side: string) => (of(side) ? String(Number(of(side).shares)) : '0');
  const reserved = (side: string) => (of(side) ? String(Number(of(side).reserved)) : '0');
  return { yes: shares('yes'), no: shares('no'), yesReserved: reserved('yes'), noReserved: reserved('no') };
}

/** Per account: the ledger sums to the balance; per market: what rests and what is outstanding agree with the market's figures. */
async function checkBooks(): Promise<void> {
  const ledger = await api.db.raw(`
    select b.user_id from balances b
      left join (select user_id, sum(amount) as amount, sum(reserved_change) as reserved from ledger_entries group by user_id) l on l.user_id = b.user_id
     where coalesce(l.amount, 0) <> b.cash + b.reserved or coalesce(l.reserved, 0) <> b.reserved`);
  expect(ledger.rows).toEqual([]);
  const reserves = await api.db.raw(`
    select b.user_id from balances b
      left join (select account_id, sum(price * remaining) as r from orders where action = 'buy' and status in ('OPEN', 'PARTIAL') group by account_id) o on o.account_id = b.user_id
     where b.reserved <> coalesce(o.r, 0)`);
  expect(reserves.rows).toEqual([]);
  const figures = await api.db.raw(`
    select m.ticker from markets m
     where m.liquidity <> coalesce((select sum(price * remaining) from orders o where o.market_id = m.id and o.status in ('OPEN', 'PARTIAL')), 0)
        or m.open_interest <> case when m.status = 'RESOLVED' then 0 else coalesce((select sum(shares) from positions p where p.market_id = m.id and p.side = 'yes'), 0) end
        or m.volume <> coalesce((select sum(count) from trades t where t.market_id = m.id), 0)`);
  expect(figures.rows).toEqual([]);
}

describe('placing orders', () => {
  it('rests a buy, reserving price x count, and shows it in the order book, the order list and the preview', async () => {
    const { ticker, id } = await newMarket();
    const alice = await newAccount();
    const order = await place(alice, ticker, { side: 'yes', count: '10', price: '0.45' });
    expect(order).toMatchObject({
      market_id: id,
      ticker,
      side: 'yes',
      action: 'buy',
      type: 'LIMIT',
      time_in_force: 'GTC',
      price: '0.45',
      count: '10',
      fill_count: '0',
      remaining_count: '10',
      status: 'OPEN',
      builder_code: `0x${'0'.repeat(64)}`,
      builder_maker_fee_bps: 0,
      builder_taker_fee_bps: 0,
      expiration_ts: null,
      post_only: false,
      reduce_only: false,
    });
    expect(order.client_order_id).toBe(order.order_id);
    expect(order.created_at).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
    expect(await balance(alice)).toEqual({ balance: '1000.00', reserved: '4.50', available: '995.50' });
    expect(await trading.getOrderbook(ticker)).toEqual({ yes: [['0.45', '10']], no: [] });
    expect(await trading.getOrder(alice, order.order_id)).toEqual(order);
    expect((await marketRow(id)).liquidity).toBe('4.50000000');

    // A NO bid at 0.30 is a YES ask at 0.70: it shows as a NO bid; the id of the market works as its ticker.
    await place(alice, id, { side: 'ask', count: '2.5', price: '0.30' });
    await place(alice, ticker, { side: 'no', count: '1', price: '0.30' });
    await place(alice, ticker, { side: 'no', count: '1', price: '0.35' });
    expect(await trading.getOrderbook(id)).toEqual({ yes: [['0.45', '10']], no: [['0.35', '1'], ['0.30', '3.5']] });
    await checkBooks();
  });

  it('previews a buy and a sell with every field of the OrderPreview schema', async () => {
    const { ticker, id } = await newMarket();
    const bob = await newAccount();
    const buy = await trading.previewOrder(bob, { ticker, side: 'bid', count: '3', price: '0.33' });
    expect(buy).toEqual({
      market_id: id,
      ticker,
      side: 'YES',
      action: 'buy',
      price: '0.33',
      count: '3',
      notional: '0.99',
      reserve_required: '0.99',
      available_balance: '1000.00',
      sufficient_balance: true,
      position_available: null,
      sufficient_position: null,
      platform_taker_fee_bps: 0,
      platform_maker_fee_bps: 0,
      builder_code: `0x${'0'.repeat(64)}`,
      builder_maker_fee_bps: 0,
      builder_taker_fee_bps: 0,
      maker: { role: 'maker', platform_fee_bps: 0, builder_fee_bps: 0, platform_fee: '0.00', builder_fee: '0.00', total_fee: '0.00', cash_required: '0.99', net_proceeds: '0.00' },
      taker: { role: 'taker', platform_fee_bps: 0, builder_fee_bps: 0, platform_fee: '0.00', builder_fee: '0.00', total_fee: '0.00', cash_required: '0.99', net_proceeds: '0.00' },
    });
    const tooBig = await trading.previewOrder(bob, { ticker, side: 'yes', count: '5000', price: '0.50' });
    expect(tooBig).toMatchObject({ notional: '2500.00', sufficient_balance: false });

    const code = `0x${'cd'.repeat(32)}`;
    const sell = await trading.previewOrder(bob, { ticker, side: 'no', action: 'sell', count: '2', price: '0.60', builder_code: code });
    expect(sell).toMatchObject({
      side: 'NO',
      action: 'sell',
      notional: '1.20',
      reserve_required: '0.00',
      sufficient_balance: true,
      position_available: '0',
      sufficient_position: false,
      builder_code: code,
      maker: { cash_required: '0.00', net_proceeds: '1.20' },
      taker: { cash_required: '0.00', net_proceeds: '1.20' },
    });
    // Nothing was placed or reserved.
    expect(await balance(bob)).toEqual({ balance: '1000.00', reserved: '0.00', available: '1000.00' });
    await fails(trading.previewOrder(bob, { ticker: 'NOPE', side: 'yes', count: '1', price: '0.5' }), 'not_found');
    await fails(trading.previewOrder(bob, { ticker, side: 'yes', count: '1', price: '0.5', builder_code: '0x12' }), 'invalid_request', /builder_code/);
  });

  it.each([
    [{ price: '0' }, /price/],
    [{ price: '0.995' }, /price/],
    [{ price: '1' }, /price/],
    [{ count: '0' }, /count/],
    [{ count: '1.00001' }, /count/],
    [{ count: '-1' }, /count/],
    [{ side: 'long' }, /side/],
    [{ time_in_force: 'GTD' }, /time_in_force/],
    [{ builder_code: `0x${'g'.repeat(64)}` }, /builder_code/],
    [{ expiration_ts: new Date(Date.now() - 1000).toISOString() }, /future/],
    [{ reduce_only: true }, /reduce_only/],
  ])('refuses %j with a 400 and places nothing', async (change, message) => {
    const { ticker } = await newMarket();
    const carol = await newAccount();
    await fails(place(carol, ticker, { side: 'yes', count: '1', price: '0.50', ...(change as object) }), 'invalid_request', message);
    expect(await api.db('orders').where({ account_id: carol })).toEqual([]);
  });

  it('answers 404 for an unknown market and 409 for a market that is not ACTIVE', async () => {
    const dave = await newAccount();
    await fails(place(dave, 'NO-SUCH-MARKET', { side: 'yes', count: '1', price: '0.5' }), 'not_found');
    await fails(place(dave, '999999999', { side: 'yes', count: '1', price: '0.5' }), 'not_found');
    const { ticker } = await newMarket();
    await catalogue.closeMarket(ticker);
    await fails(place(dave, ticker, { side: 'yes', count: '1', price: '0.5' }), 'conflict', /not ACTIVE/);
    await fails(trading.previewOrder(dave, { ticker, side: 'yes', count: '1', price: '0.5' }), 'conflict');
  });

  it('keeps client_order_id unique per account (409) and echoes it and the builder code', async () => {
    const { ticker } = await newMarket();
    const [erin, frank] = [await newAccount(), await newAccount()];
    const code = `0x${'AB'.repeat(32)}`;
    const order = await place(erin, ticker, { side: 'yes', count: '1', price: '0.10', client_order_id: 'my-order-1', builder_code: code });
    expect(order).toMatchObject({ client_order_id: 'my-order-1', builder_code: code });
    await fails(place(erin, ticker, { side: 'no', count: '1', price: '0.10', client_order_id: 'my-order-1' }), 'conflict', /client_order_id/);
    // Another account may use the same id; the account itself may not, even once its order is cancelled.
    await place(frank, ticker, { side: 'yes', count: '1', price: '0.10', client_order_id: 'my-order-1' });
    await trading.cancelOrder(erin, order.order_id);
    await fails(place(erin, ticker, { side: 'yes', count: '1', price: '0.10', client_order_id: 'my-order-1' }), 'conflict');
    // Racing duplicates: exactly one wins.
    const race = await Promise.allSettled([0, 1, 2].map(() => place(erin, ticker, { side: 'yes', count: '1', price: '0.10', client_order_id: 'race' })));
    expect(race.filter((r) => r.status === 'fulfilled')).toHaveLength(1);
    for (const r of race) if (r.status === 'rejected') expect((r.reason as DomainError).code).toBe('conflict');
  });

  it('refuses buys beyond the available cash and sells beyond the unreserved shares (400)', async () => {
    const { ticker, id } = await newMarket();
    const [gina, hank] = [await newAccount(), await newAccount()];
    await fails(place(gina, ticker, { side: 'yes', count: '2001', price: '0.50' }), 'invalid_request', /insufficient balance/);
    await place(gina, ticker, { side: 'yes', count: '1000', price: '0.50' }); // reserves 500
    await place(gina, ticker, { side: 'no', count: '1000', price: '0.49' }); // reserves 490
    await fails(place(gina, ticker, { side: 'no', count: '1000', price: '0.02' }), 'invalid_request', /insufficient balance/);
    expect(await balance(gina)).toEqual({ balance: '1000.00', reserved: '990.00', available: '10.00' });

    await fails(place(hank, ticker, { side: 'yes', action: 'sell', count: '1', price: '0.50' }), 'invalid_request', /insufficient position/);
    // Hank buys 10 YES from the resting NO bid (mint at 0.51), then may sell exactly those 10, once.
    const bought = await place(hank, ticker, { side: 'yes', count: '10', price: '0.51' });
    expect(bought).toMatchObject({ status: 'FILLED', fill_count: '10' });
    expect(await position(hank, id)).toMatchObject({ yes: '10', no: '0' });
    await place(hank, ticker, { side: 'yes', action: 'sell', count: '6', price: '0.90', reduce_only: true });
    await fails(place(hank, ticker, { side: 'yes', action: 'sell', count: '5', price: '0.90' }), 'invalid_request', /insufficient position/);
    await fails(place(hank, ticker, { side: 'yes', action: 'sell', count: '5', price: '0.90', reduce_only: true }), 'invalid_request', /insufficient position/);
    await place(hank, ticker, { side: 'yes', action: 'sell', count: '4', price: '0.95' });
    expect(await position(hank, id)).toMatchObject({ yes: '10', yesReserved: '10' });
    expect((await trading.previewOrder(hank, { ticker, side: 'yes', action: 'sell', count: '1', price: '0.5' })).position_available).toBe('0');
    await checkBooks();
  });
});

describe('matching', () => {
  it('mints a pair when a YES buyer meets a NO buyer, at the maker price, releasing the price improvement', async () => {
    const { ticker, id, event } = await newMarket();
    const [maker, taker] = [await newAccount(), await newAccount()];
    const resting = await place(maker, ticker, { side: 'no', count: '10', price: '0.30' }); // YES ask at 0.70
    const order = await place(taker, ticker, { side: 'yes', count: '10', price: '0.75' });
    expect(order).toMatchObject({ status: 'FILLED', fill_count: '10', remaining_count: '0', price: '0.75' });
    expect(await trading.getOrder(maker, resting.order_id)).toMatchObject({ status: 'FILLED', fill_count: '10', remaining_count: '0' });
    expect(await balance(taker)).toEqual({ balance: '993.00', reserved: '0.00', available: '993.00' });
    expect(await balance(maker)).toEqual({ balance: '997.00', reserved: '0.00', available: '997.00' });
    expect(await position(taker, id)).toMatchObject({ yes: '10', no: '0' });
    expect(await position(maker, id)).toMatchObject({ yes: '0', no: '10' });
    const market = await marketRow(id);
    expect(market).toMatchObject({ last_yes_price: '0.7000', last_no_price: '0.3000', volume: '10.00000000', open_interest: '10.00000000', liquidity: '0.00000000' });
    await trading.flushRollups(); // event rollups are refreshed in the background (every 250 ms): now
    expect((await api.db('events').where({ ticker: event }).first()).open_interest).toBe('10.00000000');

    const trades = await trading.listTrades({ ticker, limit: 10 });
    expect(trades.trades).toEqual([{ trade_id: expect.any(String), market_id: id, ticker, yes_price: '0.70', no_price: '0.30', count: '10', taker_side: 'yes', created_at: expect.any(String) }]);
    const takerFills = await trading.listFills(taker, { ticker, limit: 10 });
    expect(takerFills.fills).toEqual([
      { fill_id: expect.any(String), order_id: order.order_id, market_id: id, ticker, side: 'yes', action: 'buy', price: '0.70', count: '10', role: 'taker', created_at: expect.any(String) },
    ]);
    expect((await trading.listFills(maker, { limit: 10 })).fills).toMatchObject([{ order_id: resting.order_id, side: 'no', price: '0.30', role: 'maker' }]);
    expect((await trading.listPositions(taker, { limit: 10 })).positions).toEqual([
      { market_id: id, ticker, side: 'yes', count: '10', available: '10', updated_at: expect.any(String) },
    ]);
    await checkBooks();
  });

  it('transfers shares from a YES seller to a YES buyer, and merges a pair when a YES seller meets a NO seller', async () => {
    const { ticker, id } = await newMarket();
    const [a, b, c] = [await newAccount(), await newAccount(), await newAccount()];
    await place(a, ticker, { side: 'yes', count: '20', price: '0.60' });
    await place(b, ticker, { side: 'no', count: '20', price: '0.40' }); // mint 20 at 0.60
    // transfer: a sells 5 YES at 0.55 to c's resting bid at 0.58 (maker price)
    await place(c, ticker, { side: 'yes', count: '5', price: '0.58' });
    const sale = await place(a, ticker, { side: 'yes', action: 'sell', count: '5', price: '0.55' });
    expect(sale).toMatchObject({ status: 'FILLED' });
    expect(await balance(a)).toMatchObject({ balance: `${1000 - 12 + 2.9}0` }); // 988 + 5 x 0.58
    expect(await position(c, id)).toMatchObject({ yes: '5' });
    expect(await position(a, id)).toMatchObject({ yes: '15' });
    let market = await marketRow(id);
    expect(market).toMatchObject({ open_interest: '20.00000000', volume: '25.00000000', last_yes_price: '0.5800' });

    // merge: a rests a YES sell at 0.65; b sells 10 NO at 0.30 (a YES bid at 0.70): executes at 0.65 / 0.35
    await place(a, ticker, { side: 'yes', action: 'sell', count: '10', price: '0.65' });
    const merge = await place(b, ticker, { side: 'no', action: 'sell', count: '10', price: '0.30' });
    expect(merge).toMatchObject({ status: 'FILLED', fill_count: '10' });
    expect(await position(a, id)).toMatchObject({ yes: '5', yesReserved: '0' });
    expect(await position(b, id)).toMatchObject({ no: '10' });
    expect(await balance(a)).toMatchObject({ balance: '997.40' }); // 990.90 + 6.50
    expect(await balance(b)).toMatchObject({ balance: '995.50' }); // 992 + 3.50
    market = await marketRow(id);
    expect(market).toMatchObject({ open_interest: '10.00000000', volume: '35.00000000', last_yes_price: '0.6500', last_no_price: '0.3500' });
    const tape = await trading.listTrades({ ticker, limit: 10 });
    // taker_side: the outcome the taker bought, or the opposite of the one it sold.
    expect(tape.trades.map((t) => [t.yes_price, t.count, t.taker_side])).toEqual([
      ['0.65', '10', 'yes'],
      ['0.58', '5', 'no'],
      ['0.60', '20', 'no'],
    ]);
    await checkBooks();
  });

  it('fills makers in price then time priority, partially, and rests the remainder', async () => {
    const { ticker } = await newMarket();
    const [m1, m2, m3, t] = [await newAccount(), await newAccount(), await newAccount(), await newAccount()];
    const first = await place(m1, ticker, { side: 'no', count: '3', price: '0.50' }); // ask 0.50
    const second = await place(m2, ticker, { side: 'no', count: '3', price: '0.50' }); // ask 0.50, later
    const better = await place(m3, ticker, { side: 'no', count: '2', price: '0.55' }); // ask 0.45: best
    const order = await place(t, ticker, { side: 'yes', count: '10', price: '0.50', client_order_id: 'sweep' });
    expect(order).toMatchObject({ status: 'PARTIAL', fill_count: '8', remaining_count: '2' });
    expect((await trading.getOrder(m3, better.order_id)).status).toBe('FILLED');
    expect((await trading.getOrder(m1, first.order_id)).status).toBe('FILLED');
    expect((await trading.getOrder(m2, second.order_id)).status).toBe('FILLED');
    // Reserve: 10 x 0.50 placed; 2 x 0.45 + 6 x 0.50 paid; 2 x 0.05 improvement back; 2 x 0.50 still reserved.
    expect(await balance(t)).toEqual({ balance: '996.10', reserved: '1.00', available: '995.10' });
    expect(await trading.getOrderbook(ticker)).toEqual({ yes: [['0.50', '2']], no: [] });

    // A partial fill of a maker: the older of two makers at one price goes first.
    const [n1, n2, u] = [await newAccount(), await newAccount(), await newAccount()];
    const { ticker: t2 } = await newMarket();
    const older = await place(n1, t2, { side: 'yes', count: '4', price: '0.20' });
    const newer = await place(n2, t2, { side: 'yes', count: '4', price: '0.20' });
    await place(u, t2, { side: 'no', count: '5', price: '0.80', time_in_force: 'IOC' });
    expect(await trading.getOrder(n1, older.order_id)).toMatchObject({ status: 'FILLED' });
    expect(await trading.getOrder(n2, newer.order_id)).toMatchObject({ status: 'PARTIAL', fill_count: '1', remaining_count: '3' });
    await checkBooks();
  });

  it('cancels the IOC remainder, cancels an unfillable FOK whole, and fills a fillable FOK', async () => {
    const { ticker } = await newMarket();
    const [m, t] = [await newAccount(), await newAccount()];
    await place(m, ticker, { side: 'yes', count: '5', price: '0.40' }); // bid 0.40 = NO ask... for a NO buyer at 0.60
    const ioc = await place(t, ticker, { side: 'no', count: '8', price: '0.60', time_in_force: 'IOC' });
    expect(ioc).toMatchObject({ status: 'CANCELLED', fill_count: '5', remaining_count: '0', count: '8', time_in_force: 'IOC' });
    expect(await balance(t)).toEqual({ balance: '997.00', reserved: '0.00', available: '997.00' });

    await place(m, ticker, { side: 'yes', count: '5', price: '0.40' });
    const fok = await place(t, ticker, { side: 'no', count: '6', price: '0.60', time_in_force: 'FOK' });
    expect(fok).toMatchObject({ status: 'CANCELLED', fill_count: '0', remaining_count: '0' });
    expect(await balance(t)).toMatchObject({ reserved: '0.00', balance: '997.00' });
    const filled = await place(t, ticker, { side: 'no', count: '5', price: '0.60', time_in_force: 'FOK' });
    expect(filled).toMatchObject({ status: 'FILLED', fill_count: '5' });
    const none = await place(t, ticker, { side: 'no', count: '1', price: '0.60', time_in_force: 'IOC' });
    expect(none).toMatchObject({ status: 'CANCELLED', fill_count: '0' });
    await checkBooks();
  });

  it('refuses a post-only order that would cross (400) and rests one that does not', async () => {
    const { ticker } = await newMarket();
    const [m, t] = [await newAccount(), await newAccount()];
    await place(m, ticker, { side: 'yes', count: '5', price: '0.40' });
    await fails(place(t, ticker, { side: 'no', count: '1', price: '0.60', post_only: true }), 'invalid_request', /post_only/);
    expect(await api.db('orders').where({ account_id: t })).toEqual([]);
    const maker = await place(t, ticker, { side: 'no', count: '1', price: '0.59', post_only: true });
    expect(maker).toMatchObject({ status: 'OPEN', post_only: true });
  });

  it('cancels the taker’s own resting orders it would meet (self-trade prevention), releasing their reserves', async () => {
    const { ticker } = await newMarket();
    const [me, other] = [await newAccount(), await newAccount()];
    const own = await place(me, ticker, { side: 'no', count: '5', price: '0.50' }); // ask 0.50 (best)
    await place(other, ticker, { side: 'no', count: '5', price: '0.45' }); // ask 0.55
    const order = await place(me, ticker, { side: 'yes', count: '5', price: '0.60' });
    expect(order).toMatchObject({ status: 'FILLED', fill_count: '5' });
    expect(await trading.getOrder(me, own.order_id)).toMatchObject({ status: 'CANCELLED', fill_count: '0', remaining_count: '0' });
    // Paid 5 x 0.55 for YES; the own NO order's reserve came back.
    expect(await balance(me)).toEqual({ balance: '997.25', reserved: '0.00', available: '997.25' });
    expect((await api.db('orders').where({ id: own.order_id }).first()).cancel_reason).toBe('self_trade');
    await checkBooks();
  });
});

describe('cancel and decrease', () => {
  it('cancels one order, releasing its reserve; 409 when not live; 404 for others, unknown and malformed ids', async () => {
    const { ticker } = await newMarket();
    const [me, other] = [await newAccount(), await newAccount()];
    const order = await place(me, ticker, { side: 'yes', count: '10', price: '0.30' });
    await fails(trading.cancelOrder(other, order.order_id), 'not_found');
    await fails(trading.getOrder(other, order.order_id), 'not_found');
    await fails(trading.cancelOrder(me, randomUUID()), 'not_found');
    await fails(trading.cancelOrder(me, 'not-a-uuid'), 'not_found');
    await fails(trading.getOrder(me, "x' or '1'='1"), 'not_found');
    await trading.cancelOrder(me, order.order_id);
    expect(await trading.getOrder(me, order.order_id)).toMatchObject({ status: 'CANCELLED', remaining_count: '0', count: '10', fill_count: '0' });
    expect(await balance(me)).toEqual({ balance: '1000.00', reserved: '0.00', available: '1000.00' });
    await fails(trading.cancelOrder(me, order.order_id), 'conflict', /not live/);
    expect(await trading.getOrderbook(ticker)).toEqual({ yes: [], no: [] });
  });

  it('cancels a resting sell, giving its shares back', async () => {
    const { ticker, id } = await newMarket();
    const [me, other] = [await newAccount(), await newAccount()];
    await place(other, ticker, { side: 'no', count: '4', price: '0.50' });
    await place(me, ticker, { side: 'yes', count: '4', price: '0.50' });
    const sell = await place(me, ticker, { side: 'yes', action: 'sell', count: '3', price: '0.90' });
    expect(await position(me, id)).toMatchObject({ yes: '4', yesReserved: '3' });
    await trading.cancelOrder(me, sell.order_id);
    expect(await position(me, id)).toMatchObject({ yes: '4', yesReserved: '0' });
    await checkBooks();
  });

  it('decreases the remainder keeping price and time priority, and releases the removed part', async () => {
    const { ticker } = await newMarket();
    const [a, b, t] = [await newAccount(), await newAccount(), await newAccount()];
    const first = await place(a, ticker, { side: 'yes', count: '10', price: '0.40' });
    const second = await place(b, ticker, { side: 'yes', count: '10', price: '0.40' });
    await trading.decreaseOrder(a, first.order_id, '4.5');
    const decreased = await trading.getOrder(a, first.order_id);
    expect(decreased).toMatchObject({ count: '10', remaining_count: '4.5', fill_count: '0', status: 'OPEN', price: '0.40' });
    expect(await balance(a)).toEqual({ balance: '1000.00', reserved: '1.80', available: '998.20' });
    expect(await trading.getOrderbook(ticker)).toEqual({ yes: [['0.40', '14.5']], no: [] });
    // Still first in time: a sell of 5 fills all of a's 4.5 then 0.5 of b's.
    await place(t, ticker, { side: 'no', count: '5', price: '0.60' });
    expect(await trading.getOrder(a, first.order_id)).toMatchObject({ status: 'FILLED', fill_count: '4.5', remaining_count: '0', count: '10' });
    expect(await trading.getOrder(b, second.order_id)).toMatchObject({ status: 'PARTIAL', fill_count: '0.5', remaining_count: '9.5' });

    await fails(trading.decreaseOrder(b, second.order_id, '9.5'), 'invalid_request', /smaller/);
    await fails(trading.decreaseOrder(b, second.order_id, '10'), 'invalid_request');
    await fails(trading.decreaseOrder(b, second.order_id, '0'), 'invalid_request');
    await fails(trading.decreaseOrder(b, second.order_id, '1.00001'), 'invalid_request');
    await fails(trading.decreaseOrder(a, first.order_id, '1'), 'conflict');
    await fails(trading.decreaseOrder(a, second.order_id, '1'), 'not_found');
    await fails(trading.decreaseOrder(a, 'nope', '1'), 'not_found');
    await trading.decreaseOrder(b, second.order_id, '0.0001');
    expect(await trading.getOrder(b, second.order_id)).toMatchObject({ remaining_count: '0.0001', status: 'PARTIAL' });
    await checkBooks();
  });

  it('cancels a batch: one result per id in request order, errors for the others', async () => {
    const { ticker } = await newMarket();
    const [me, other] = [await newAccount(), await newAccount()];
    const o1 = await place(me, ticker, { side: 'yes', count: '1', price: '0.10' });
    const o2 = await place(me, ticker, { side: 'no', count: '1', price: '0.10' });
    const theirs = await place(other, ticker, { side: 'yes', count: '1', price: '0.10' });
    const done = await place(me, ticker, { side: 'yes', count: '1', price: '0.10' });
    await trading.cancelOrder(me, done.order_id);
    const missing = randomUUID();
    const results = await trading.cancelOrders(me, [o2.order_id, theirs.order_id, 'garbage', done.order_id, o1.order_id, o2.order_id, missing]);
    expect(results).toEqual([
      { order_id: o2.order_id, status: 'cancelled' },
      { order_id: theirs.order_id, error: 'not found' },
      { order_id: 'garbage', error: 'not found' },
      { order_id: done.order_id, error: 'not live' },
      { order_id: o1.order_id, status: 'cancelled' },
      { order_id: o2.order_id, error: 'not live' },
      { order_id: missing, error: 'not found' },
    ]);
    expect(await balance(me)).toMatchObject({ reserved: '0.00' });
    expect((await trading.getOrder(other, theirs.order_id)).status).toBe('OPEN');
    expect(await trading.cancelOrders(me, [])).toEqual([]);
  });

  it('cancels all live orders of one market (by ticker or id) or of every market', async () => {
    const [m1, m2] = [await newMarket(), await newMarket()];
    const me = await newAccount();
    for (const m of [m1, m2]) {
      await place(me, m.ticker, { side: 'yes', count: '1', price: '0.10' });
      await place(me, m.ticker, { side: 'no', count: '1', price: '0.10' });
    }
    await fails(trading.cancelAllOrders(me, { market: m1.ticker, ticker: m1.ticker }), 'invalid_request');
    await fails(trading.cancelAllOrders(me, { ticker: 'NOPE' }), 'not_found');
    expect(await trading.cancelAllOrders(me, { ticker: m1.ticker })).toEqual({ cancelled: 2, market_id: m1.id });
    expect(await trading.cancelAllOrders(me, { market: m1.id })).toEqual({ cancelled: 0, market_id: m1.id });
    await place(me, m1.ticker, { side: 'yes', count: '1', price: '0.10' });
    expect(await trading.cancelAllOrders(me, {})).toEqual({ cancelled: 3, market_id: '' });
    expect(await balance(me)).toEqual({ balance: '1000.00', reserved: '0.00', available: '1000.00' });
    expect(await trading.cancelAllOrders(me, {})).toEqual({ cancelled: 0, market_id: '' });
  });
});

describe('lists', () => {
  it('pages orders newest first with an opaque cursor, filtered by status and market', async () => {
    const [m1, m2] = [await newMarket(), await newMarket()];
    const me = await newAccount();
    const ids: string[] = [];
    for (let i = 0; i < 5; i++) ids.push((await place(me, i < 3 ? m1.ticker : m2.ticker, { side: 'yes', count: '1', price: `0.1${i}` })).order_id);
    await trading.cancelOrder(me, ids[1]!);

    const seen: string[] = [];
    let cursor: string | undefined;
    do {
      const page = await trading.listOrders(me, { limit: 2, cursor });
      expect(page.orders.length).toBeLessThanOrEqual(2);
      seen.push(...page.orders.map((o) => o.order_id));
      cursor = page.cursor ?? undefined;
    } while (cursor);
    expect(seen).toEqual([...ids].reverse());

    expect((await trading.listOrders(me, { limit: 20, status: ['CANCELLED'] })).orders.map((o) => o.order_id)).toEqual([ids[1]]);
    expect((await trading.listOrders(me, { limit: 20, status: ['OPEN', 'PARTIAL'], ticker: m1.ticker })).orders.map((o) => o.order_id)).toEqual([ids[2], ids[0]]);
    expect((await trading.listOrders(me, { limit: 20, market: m2.id })).orders).toHaveLength(2);
    expect((await trading.listOrders(me, { limit: 20, market: m2.id, ticker: m1.ticker })).orders).toEqual([]);
    expect(await trading.listOrders(me, { limit: 20, ticker: 'NOPE' })).toEqual({ cursor: null, orders: [] });
    await fails(trading.listOrders(me, { limit: 20, status: ['LIVE' as never] }), 'invalid_request');
    await fails(trading.listOrders(me, { limit: 20, cursor: 'bogus' }), 'invalid_request');
    const fillsCursor = (await trading.listOrders(me, { limit: 1 })).cursor!;
    await fails(trading.listFills(me, { limit: 1, cursor: fillsCursor }), 'invalid_request');
  });

  it('pages fills, trades, positions and settlements newest first, stable while new rows arrive', async () => {
    const { ticker } = await newMarket();
    const [a, b] = [await newAccount(), await newAccount()];
    for (let i = 0; i < 5; i++) {
      await place(a, ticker, { side: 'yes', count: '1', price: '0.50' });
      await place(b, ticker, { side: 'no', count: '1', price: '0.50' });
    }
    const first = await trading.listFills(a, { ticker, limit: 2 });
    expect(first.fills).toHaveLength(2);
    // New fills arrive between pages: they do not shift the pages already being read.
    await place(a, ticker, { side: 'yes', count: '1', price: '0.50' });
    await place(b, ticker, { side: 'no', count: '1', price: '0.50' });
    const rest: string[] = [];
    let cursor = first.cursor;
    while (cursor) {
      const page = await trading.listFills(a, { ticker, limit: 2, cursor });
      rest.push(...page.fills.map((f) => f.fill_id));
      cursor = page.cursor;
    }
    const all = [...first.fills.map((f) => f.fill_id), ...rest];
    expect(all).toHaveLength(5);
    expect(new Set(all).size).toBe(5);
    expect(all.map(Number)).toEqual([...all.map(Number)].sort((x, y) => y - x));

    const tape = await trading.listTrades({ ticker, limit: 4 });
    expect(tape.trades).toHaveLength(4);
    expect((await trading.listTrades({ ticker, limit: 4, cursor: tape.cursor! })).trades).toHaveLength(2);
    expect((await trading.listTrades({ ticker: 'NOPE', limit: 4 })).trades).toEqual([]);
    expect((await trading.listPositions(b, { ticker, limit: 5 })).positions).toMatchObject([{ side: 'no', count: '6', available: '6' }]);
    expect((await trading.listSettlements(b, { limit: 5 })).settlements).toEqual([]);
  });
});

describe('closing and resolving markets', () => {
  it('close cancels every resting order of the market and releases its reserves', async () => {
    const { ticker, id } = await newMarket();
    const [a, b] = [await newAccount(), await newAccount()];
    await place(a, ticker, { side: 'yes', count: '10', price: '0.40' });
    await place(b, ticker, { side: 'no', count: '4', price: '0.60' }); // fills 4
    const sell = await place(b, ticker, { side: 'no', action: 'sell', count: '2', price: '0.90' });
    await catalogue.closeMarket(ticker);
    expect(await balance(a)).toEqual({ balance: '998.40', reserved: '0.00', available: '998.40' });
    expect(await trading.getOrder(b, sell.order_id)).toMatchObject({ status: 'CANCELLED' });
    expect(await position(b, id)).toMatchObject({ no: '4', noReserved: '0' });
    expect(await trading.getOrderbook(ticker)).toEqual({ yes: [], no: [] });
    expect((await marketRow(id)).liquidity).toBe('0.00000000');
    await checkBooks();
  });

  it.each([
    ['yes', '1004.00', '996.00'],
    ['no', '994.00', '1006.00'],
    ['invalid', '999.00', '1001.00'],
  ] as const)('resolves %s: pays winners, zeroes positions, records settlements', async (result, aBalance, bBalance) => {
    const { ticker, id } = await newMarket();
    const [a, b, c] = [await newAccount(), await newAccount(), await newAccount()];
    await place(a, ticker, { side: 'yes', count: '10', price: '0.60' });
    await place(b, ticker, { side: 'no', count: '10', price: '0.40' }); // a: YES 10 for 6; b: NO 10 for 4
    await place(c, ticker, { side: 'yes', count: '5', price: '0.20' }); // resting, cancelled by the resolution
    await catalogue.resolveMarket(ticker, result);
    expect(await balance(a)).toEqual({ balance: aBalance, reserved: '0.00', available: aBalance });
    expect(await balance(b)).toEqual({ balance: bBalance, reserved: '0.00', available: bBalance });
    expect(await balance(c)).toEqual({ balance: '1000.00', reserved: '0.00', available: '1000.00' });
    expect(await position(a, id)).toMatchObject({ yes: '0', no: '0' });
    expect((await marketRow(id)).open_interest).toBe('0.00000000');
    const settlement = (await trading.listSettlements(a, { ticker, limit: 5 })).settlements;
    expect(settlement).toEqual([
      { settlement_id: expect.any(String), market_id: id, ticker, result, yes_count: '10', no_count: '0', payout: { yes: '10.00', no: '0.00', invalid: '5.00' }[result], created_at: expect.any(String) },
    ]);
    expect((await trading.listSettlements(c, { limit: 5 })).settlements).toEqual([]);
    expect((await trading.listPositions(a, { ticker, limit: 5 })).positions).toEqual([]);
    await fails(place(a, ticker, { side: 'yes', count: '1', price: '0.5' }), 'conflict');
    await checkBooks();
  });
});

describe('expiry', () => {
  it('cancels orders whose expiration_ts has passed, through the cancel path', async () => {
    const { ticker, id } = await newMarket();
    const a = await newAccount();
    const in1h = new Date(Date.now() + 3600_000).toISOString();
    const expiring = await place(a, ticker, { side: 'yes', count: '10', price: '0.30', expiration_ts: in1h });
    const lasting = await place(a, ticker, { side: 'yes', count: '1', price: '0.20' });
    expect(expiring.expiration_ts).toBe(in1h);
    expect(await trading.expireOrders(new Date(Date.now() + 60_000))).toBe(0);
    expect(await trading.expireOrders(new Date(Date.now() + 2 * 3600_000))).toBeGreaterThanOrEqual(1);
    expect(await trading.getOrder(a, expiring.order_id)).toMatchObject({ status: 'CANCELLED', remaining_count: '0' });
    expect(await trading.getOrder(a, lasting.order_id)).toMatchObject({ status: 'OPEN' });
    expect(await balance(a)).toEqual({ balance: '1000.00', reserved: '0.20', available: '999.80' });
    expect((await api.db('orders').where({ id: expiring.order_id }).first()).cancel_reason).toBe('expired');
    expect((await marketRow(id)).liquidity).toBe('0.20000000');
    await checkBooks();
  });

  it('never matches an expired order: the book skips it and a placement in its market cancels it', async () => {
    const { ticker } = await newMarket();
    const [a, b] = [await newAccount(), await newAccount()];
    let clock = Date.now();
    const { TradingService } = await import('../../src/domain/trading/service.js');
    const timed = new TradingService(api.db, { now: () => new Date(clock) });
    const soon = await timed.placeOrder(a, { ticker, side: 'yes', count: '5', price: '0.50', expiration_ts: new Date(clock + 10_000).toISOString() });
    clock += 20_000;
    expect(await timed.getOrderbook(ticker)).toEqual({ yes: [], no: [] });
    const taker = await timed.placeOrder(b, { ticker, side: 'no', count: '5', price: '0.50' });
    expect(taker).toMatchObject({ status: 'OPEN', fill_count: '0' });
    expect(await timed.getOrder(a, soon.order_id)).toMatchObject({ status: 'CANCELLED' });
    expect(await balance(a)).toMatchObject({ reserved: '0.00' });
    await checkBooks();
  });

  it('is cancelled by the running sweep within a couple of seconds', async () => {
    const { ticker } = await newMarket();
    const a = await newAccount();
    const order = await place(a, ticker, { side: 'yes', count: '1', price: '0.50', expiration_ts: new Date(Date.now() + 500).toISOString() });
    await expect.poll(async () => (await trading.getOrder(a, order.order_id)).status, { timeout: 5000, interval: 100 }).toBe('CANCELLED');
    expect(await balance(a)).toMatchObject({ reserved: '0.00' });
  });
});

describe('concurrency', () => {
  it('keeps every account and book consistent under concurrent placements and cancels on shared markets', async () => {
    const ms = [await newMarket(), await newMarket()];
    const accounts = await Promise.all([0, 1, 2, 3, 4, 5].map(() => newAccount()));
    const work: Array<Promise<unknown>> = [];
    for (let i = 0; i < 60; i++) {
      const account = accounts[i % accounts.length]!;
      const m = ms[i % 2]!;
      const side = i % 3 === 0 ? 'no' : 'yes';
      work.push(
        place(account, m.ticker, { side, count: String(1 + (i % 4)), price: `0.${40 + (i % 20)}` }).then((o) =>
          i % 5 === 0 ? trading.cancelOrder(account, o.order_id).catch(() => undefined) : undefined,
        ),
      );
      if (i % 10 === 0) work.push(trading.cancelAllOrders(accounts[(i + 1) % accounts.length]!, {}));
    }
    const settled = await Promise.allSettled(work);
    const failures = settled.filter((s) => s.status === 'rejected').map((s) => (s).reason);
    expect(failures).toEqual([]);
    await checkBooks();
    const crossed = await api.db.raw(`
      select market_id from orders where status in ('OPEN', 'PARTIAL') group by market_id
      having max(yes_price) filter (where book_side = 'bid') >= min(yes_price) filter (where book_side = 'ask')`);
    expect(crossed.rows).toEqual([]);
  });
});

describe('placements on one market at once', () => {
  it('go in shared transactions, in arrival order, each with its own outcome', async () => {
    const m = await newMarket();
    const [maker, taker, dup] = await Promise.all([newAccount(), newAccount(), newAccount()]);
    const outcomes = await Promise.allSettled([
      ...Array.from({ length: 12 }, (_, i) => place(maker, m.ticker, { side: 'yes', count: '2', price: `0.${30 + i}` })),
      place(taker, m.ticker, { side: 'yes', count: '100000', price: '0.50' }), // beyond the taker's cash
      place(maker, m.ticker, { side: 'no', count: '1', price: '0.90', post_only: true }), // would cross the bids
      place(dup, m.ticker, { side: 'yes', count: '1', price: '0.10', client_order_id: 'same' }),
      place(dup, m.ticker, { side: 'yes', count: '1', price: '0.11', client_order_id: 'same' }),
      ...Array.from({ length: 6 }, () => place(taker, m.ticker, { side: 'no', count: '2', price: '0.70' })), // each fills 2 at the best bid
    ]);
    const reason = (i: number) => (outcomes[i] as PromiseRejectedResult).reason as DomainError;
    expect(outcomes.slice(0, 12).every((o) => o.status === 'fulfilled')).toBe(true);
    expect(reason(12).code).toBe('invalid_request');
    expect(reason(12).message).toMatch(/insufficient balance/);
    expect(reason(13).message).toMatch(/post_only/);
    expect(outcomes[14]!.status).toBe('fulfilled');
    expect(reason(15).code).toBe('conflict');
    // The crossing orders met the best bids first (0.41 down to 0.36), in arrival order.
    const fills = outcomes.slice(16).map((o) => (o as PromiseFulfilledResult<Awaited<ReturnType<typeof place>>>).value);
    expect(fills.map((o) => o.status)).toEqual(Array(6).fill('FILLED'));
    const filledBids = await api.db('orders').where({ market_id: m.id, account_id: maker, status: 'FILLED' }).orderBy('price', 'desc').pluck('price');
    expect(filledBids.map(Number)).toEqual([0.41, 0.4, 0.39, 0.38, 0.37, 0.36]);
    // Fewer transactions than orders: the resting orders (never written again) that arrived together were
    // inserted by shared transactions (one transaction id, xmin, for several rows).
    const resting = await api.db.raw(`select count(distinct xmin::text)::int as transactions, count(*)::int as orders from orders where market_id = ? and status = 'OPEN'`, [m.id]);
    expect(resting.rows[0].orders).toBe(7);
    expect(resting.rows[0].transactions).toBeLessThan(7);
    // Real-time feed records numbered without gaps, in commit order: one per write, so fewer than the
    // placements, and every order placed is in one of them.
    const records = await api.db('feed_events').where({ market_id: m.id }).orderBy('seq').select('seq', 'events');
    expect(records.map((r) => Number(r.seq))).toEqual(Array.from({ length: records.length }, (_, i) => i + 1));
    expect(records.length).toBeLessThan(19);
    const recorded = new Set(records.flatMap((r) => (typeof r.events === 'string' ? JSON.parse(r.events) : r.events).orders.map((o: { id: string }) => o.id)));
    const placedIds = outcomes.flatMap((o) => (o.status === 'fulfilled' ? [o.value.order_id] : []));
    expect(placedIds).toHaveLength(19);
    expect(placedIds.filter((id) => !recorded.has(id))).toEqual([]);
    await checkBooks();
  });
  it('that meet or cancel orders placed earlier in their transaction: one write, those orders inserted as the transaction leaves them, each answered as once made', async () => {
    const [m, other] = [await newMarket(), await newMarket()];
    const [maker, taker] = await Promise.all([newAccount(), newAccount()]);
    // The first placement runs alone; the four after it arrive meanwhile and share the next transaction.
    const [, bid, take, own, cross] = await Promise.all([
      place(maker, other.ticker, { side: 'yes', count: '1', price: '0.10' }),
      place(maker, m.ticker, { side: 'yes', count: '5', price: '0.40' }),
      place(taker, m.ticker, { side: 'no', count: '2', price: '0.70' }), // fills 2 of the bid just placed
      place(maker, m.ticker, { side: 'yes', count: '1', price: '0.30' }),
      place(maker, m.ticker, { side: 'no', count: '1', price: '0.80' }), // meets its own bids: both cancelled (self-trade)
    ]);
    // Each placement answers its order as it was once made.
    expect([bid, take, own, cross].map((o) => [o.status, o.fill_count, o.remaining_count])).toEqual([
      ['OPEN', '0', '5'],
      ['FILLED', '2', '0'],
      ['OPEN', '0', '1'],
      ['OPEN', '0', '1'],
    ]);
    // The rows are what the transaction left: the bid filled 2, then both bids cancelled by the maker's own crossing order.
    const rows = await api.db('orders').where({ market_id: m.id }).orderBy('sequence').select('id', 'status', 'filled', 'remaining', 'cancelled', 'cancel_reason');
    expect(rows.map((r) => [r.id, r.status, Number(r.filled), Number(r.remaining), Number(r.cancelled), r.cancel_reason])).toEqual([
      [bid.order_id, 'CANCELLED', 2, 0, 3, 'self_trade'],
      [take.order_id, 'FILLED', 2, 0, 0, null],
      [own.order_id, 'CANCELLED', 0, 0, 1, 'self_trade'],
      [cross.order_id, 'OPEN', 0, 1, 0, null],
    ]);
    const inserted = await api.db.raw(`select count(distinct xmin::text)::int as transactions from orders where market_id = ?`, [m.id]);
    expect(inserted.rows[0].transactions).toBe(1);
    // One feed record for the market: its trade, each order as committed, and a book that only gained what rests.
    const records = await api.db('feed_events').where({ market_id: m.id }).select('events');
    expect(records).toHaveLength(1);
    const events = typeof records[0].events === 'string' ? JSON.parse(records[0].events) : records[0].events;
    expect(events.trades.map((t: { count: string; yes_price: string }) => [t.count, t.yes_price])).toEqual([['2', '0.40']]);
    expect(events.orders.map((o: { id: string; status: string }) => [o.id, o.status])).toEqual(rows.map((r) => [r.id, r.status]));
    expect(events.book).toEqual([{ side: 'no', price: '0.80', delta: '1' }]);
    await checkBooks();
  });
  it('are made again one by one when their shared transaction fails, so that only the failing one fails', async () => {
    const m = await newMarket();
    const [a, b] = await Promise.all([newAccount(), newAccount()]);
    // A write the database refuses (as a constraint would), for one order only.
    await api.db.raw(`create function refuse_boom() returns trigger language plpgsql as $$
      begin if new.client_order_id = 'boom' then raise exception 'refused for the test'; end if; return new; end $$`);
    await api.db.raw('create trigger refuse_boom before insert on orders for each row execute function refuse_boom()');
    try {
      const outcomes = await Promise.allSettled([
        place(a, m.ticker, { side: 'yes', count: '1', price: '0.20' }),
        place(a, m.ticker, { side: 'yes', count: '1', price: '0.21' }),
        place(b, m.ticker, { side: 'yes', count: '1', price: '0.22', client_order_id: 'boom' }),
        place(b, m.ticker, { side: 'yes', count: '1', price: '0.23' }),
        place(a, m.ticker, { side: 'no', count: '1', price: '0.80' }),
      ]);
      expect(outcomes.map((o) => o.status)).toEqual(['fulfilled', 'fulfilled', 'rejected', 'fulfilled', 'fulfilled']);
      expect(String((outcomes[2] as PromiseRejectedResult).reason)).toMatch(/refused for the test/);
    } finally {
      await api.db.raw('drop trigger refuse_boom on orders');
      await api.db.raw('drop function refuse_boom()');
    }
    expect(await api.db('orders').where({ market_id: m.id }).count({ n: '*' }).first()).toEqual({ n: '4' });
    await checkBooks();
  });

  it('are not made again when their transaction fails after placing (a COMMIT whose outcome is unknown could have placed them)', async () => {
    const m = await newMarket();
    const a = await newAccount();
    // Every feed outbox write fails, after the placements' own writes; the sequence counts the attempts
    // (nextval is not rolled back).
    await api.db.raw('create sequence outbox_attempts');
    await api.db.raw(`create function refuse_outbox() returns trigger language plpgsql as $$
      begin perform nextval('outbox_attempts'); raise exception 'outbox refused for the test'; end $$`);
    await api.db.raw('create trigger refuse_outbox before insert on feed_events for each statement execute function refuse_outbox()');
    try {
      const outcomes = await Promise.allSettled([0.2, 0.21, 0.22, 0.23, 0.24].map((price) => place(a, m.ticker, { side: 'yes', count: '1', price: String(price) })));
      expect(outcomes.map((o) => o.status)).toEqual(Array(5).fill('rejected'));
      // The first alone, then the other four together, each transaction once.
      expect((await api.db.raw(`select last_value::int as n from outbox_attempts`)).rows[0].n).toBe(2);
    } finally {
      await api.db.raw('drop trigger refuse_outbox on feed_events');
      await api.db.raw('drop function refuse_outbox()');
      await api.db.raw('drop sequence outbox_attempts');
    }
    expect(await api.db('orders').where({ market_id: m.id }).count({ n: '*' }).first()).toEqual({ n: '0' });
    await checkBooks();
  });
});

describe('placements made together', () => {
  /** A placement by account `who` (0..3) of the mirrored sets; sells come after buys have made positions. */
  const placementArb = fc.record({
    who: fc.integer({ min: 0, max: 3 }),
    side: fc.constantFrom('yes' as const, 'no' as const),
    action: fc.constantFrom('buy' as const, 'buy' as const, 'sell' as const),
    price: fc.integer({ min: 30, max: 70 }),
    count: fc.constantFrom('1', '2', '3.5', '600'),
    time_in_force: fc.constantFrom('GTC' as const, 'GTC' as const, 'IOC' as const, 'FOK' as const),
    post_only: fc.boolean(),
    clientOrderId: fc.option(fc.constantFrom('a', 'b'), { freq: 4 }),
  });

  it('span markets: each market matched on its own, a missing or closed market refusing only its placements', async () => {
    const [m1, m2, closed] = [await newMarket(), await newMarket(), await newMarket()];
    await catalogue.closeMarket(closed.ticker);
    const [maker, taker] = await Promise.all([newAccount(), newAccount()]);
    const outcomes = await Promise.allSettled([
      place(maker, m1.ticker, { side: 'yes', count: '1', price: '0.10' }), // alone: the others arrive meanwhile
      place(maker, m1.ticker, { side: 'yes', count: '2', price: '0.40' }),
      place(maker, m2.ticker, { side: 'yes', count: '3', price: '0.45' }),
      place(taker, closed.ticker, { side: 'no', count: '1', price: '0.70' }),
      place(taker, 'TRD-NO-SUCH-MARKET', { side: 'no', count: '1', price: '0.70' }),
      place(taker, m1.ticker, { side: 'no', count: '5', price: '0.70', time_in_force: 'IOC' }),
      place(taker, m2.ticker.toLowerCase(), { side: 'no', count: '1', price: '0.70' }),
      place(taker, m2.id, { side: 'no', count: '1', price: '0.70' }),
    ]);
    expect(outcomes.map((o) => o.status)).toEqual(['fulfilled', 'fulfilled', 'fulfilled', 'rejected', 'rejected', 'fulfilled', 'fulfilled', 'fulfilled']);
    expect(((outcomes[3] as PromiseRejectedResult).reason as DomainError).code).toBe('conflict');
    expect(((outcomes[4] as PromiseRejectedResult).reason as DomainError).code).toBe('not_found');
    const value = (i: number) => (outcomes[i] as PromiseFulfilledResult<Awaited<ReturnType<typeof place>>>).value;
    // The IOC on m1 (selling YES down to 0.30) met m1's bid at 0.40 only, never m2's at 0.45.
    expect([value(5).status, value(5).fill_count]).toEqual(['CANCELLED', '2']);
    expect([value(6).ticker, value(6).status, value(7).ticker, value(7).status]).toEqual([m2.ticker, 'FILLED', m2.ticker, 'FILLED']);
    expect((await api.db('trades').where({ market_id: m1.id }).orderBy('id').select('yes_price', 'count')).map((t) => [Number(t.yes_price), Number(t.count)])).toEqual([[0.4, 2]]);
    expect(await position(maker, m2.id)).toMatchObject({ yes: '2' });
    await checkBooks();
  });

  it('switch the rest of their transaction to generic plans with their first statement', async () => {
    const m = await newMarket();
    const a = await newAccount();
    const mode = async (db: Queryable) => (await db.raw(`select current_setting('plan_cache_mode') as mode`)).rows[0].mode as string;
    const [before, inside] = await api.db.transaction(async (tx) => {
      await tx.raw(`set local plan_cache_mode = auto`);
      const was = await mode(tx);
      await beginPlacements(tx, [{ ref: m.ticker, accountId: a, clientOrderId: undefined, side: 'yes', sell: false, bookSide: 'ask', yesLimit: '0.40' }]);
      return [was, await mode(tx)];
    });
    expect([before, inside]).toEqual(['auto', 'force_generic_plan']);
  });

  type Placement = (typeof placementArb extends fc.Arbitrary<infer P> ? P : never);
  type Settled = PromiseSettledResult<Awaited<ReturnType<typeof place>>>;
  const input = (p: Placement) => ({
    side: p.side,
    action: p.action,
    price: `0.${p.price}`,
    count: p.count,
    time_in_force: p.time_in_force,
    post_only: p.post_only && p.time_in_force === 'GTC',
    ...(p.clientOrderId === null ? {} : { client_order_id: p.clientOrderId }),
  });
  const outcome = (o: Settled) =>
    o.status === 'fulfilled' ? [o.value.status, o.value.fill_count, o.value.remaining_count] : [String((o.reason as Error).message).replaceAll(/TRD-M\d+/g, 'M')];
  const state = async (marketId: string, ids: string[]) => ({
    orders: (await api.db('orders').where({ market_id: marketId }).orderBy('sequence').select('account_id', 'status', 'remaining', 'filled', 'cancelled', 'cancel_reason')).map((o) => ({ ...o, account_id: ids.indexOf(o.account_id) })),
    balances: await Promise.all(ids.map((id) => balance(id))),
    positions: await Promise.all(ids.map((id) => position(id, marketId))),
    trades: await api.db('trades').where({ market_id: marketId }).orderBy('id').select('yes_price', 'count', 'taker_side', 'kind'),
    market: await api.db('markets').where({ id: marketId }).first('volume', 'liquidity', 'open_interest', 'last_yes_price'),
  });

  /**
   * Makes the placements all at once with `together` (on a market and accounts of their own), and one at a
   * time on another market with other accounts: the outcomes, orders, balances, positions, trades and market
   * figures must be the same, and the placements made together in at most two transactions (the first
   * submission alone, the rest in one; none made again one by one).
   */
  async function expectSameAsOneAtATime(placements: Placement[], together: (ticker: string, accounts: string[]) => Promise<Settled[]>): Promise<void> {
    const [shared, apart] = [await newMarket(), await newMarket()];
    const accounts = { together: await Promise.all([0, 1, 2, 3].map(() => newAccount())), apart: await Promise.all([0, 1, 2, 3].map(() => newAccount())) };
    const batched = await together(shared.ticker, accounts.together);
    const sequential: Settled[] = [];
    for (const p of placements) sequential.push(await place(accounts.apart[p.who]!, apart.ticker, input(p)).then((value) => ({ status: 'fulfilled' as const, value }), (reason: unknown) => ({ status: 'rejected' as const, reason })));
    expect(batched.map(outcome)).toEqual(sequential.map(outcome));
    expect(await state(shared.id, accounts.together)).toEqual(await state(apart.id, accounts.apart));
    const transactions = await api.db('orders').where({ market_id: shared.id }).countDistinct({ n: 'created_at' }).first();
    expect(Number(transactions!.n)).toBeLessThanOrEqual(2);
  }

  it('in a batch (placeOrders): 1 to 20 orders, each checked on its own, outcomes in order', async () => {
    const { ticker } = await newMarket();
    const a = await newAccount();
    const order: PlaceOrderInput = { ticker, side: 'yes', count: '1', price: '0.40' };
    for (const size of [0, 21]) {
      await expect(trading.placeOrders(a, Array(size).fill(order))).rejects.toMatchObject({ code: 'invalid_request', message: `a batch places 1 to 20 orders, got ${size}` });
    }
    const outcomes = await trading.placeOrders(a, [order, { ...order, price: '1.5' }, { ...order, time_in_force: 'DAY' as never }, { ...order, count: '2' }]);
    expect(outcomes.map((o) => ('order' in o ? o.order.count : (o.error as DomainError).code))).toEqual(['1', 'invalid_request', 'invalid_request', '2']);
    expect(await api.db('orders').where({ account_id: a }).countDistinct({ n: 'created_at' })).toEqual([{ n: '1' }]);
  });

  // Twelve runs of up to 24 placements, each made twice over: minutes when the suite shares the CPU.
  it('come to exactly what the same placements made one at a time come to', async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(placementArb, { minLength: 2, maxLength: 24 }), (placements) =>
        // All at once: the first alone, the others in shared transactions.
        expectSameAsOneAtATime(placements, (ticker, accounts) => Promise.allSettled(placements.map((p) => place(accounts[p.who]!, ticker, input(p))))),
      ),
      { numRuns: 12, endOnFailure: true },
    );
    await checkBooks();
  }, 180_000);

  it('come to exactly that too when they are batch placements (placeOrders), one per run of an account’s placements, all at once', async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(placementArb, { minLength: 2, maxLength: 24 }), (placements) =>
        expectSameAsOneAtATime(placements, async (ticker, accounts) => {
          // Consecutive placements of one account make one batch (at most 20 orders).
          const batches: Placement[][] = [];
          for (const p of placements) {
            const last = batches.at(-1);
            if (last && last[0]!.who === p.who && last.length < 20) last.push(p);
            else batches.push([p]);
          }
          const results = await Promise.all(batches.map((b) => trading.placeOrders(accounts[b[0]!.who]!, b.map((p) => ({ ticker, ...input(p) })))));
          return results.flat().map((r): Settled => ('order' in r ? { status: 'fulfilled', value: r.order } : { status: 'rejected', reason: r.error }));
        }),
      ),
      { numRuns: 12, endOnFailure: true },
    );
    await checkBooks();
  }, 180_000);
});

describe('balances', () => {
  it('reports balance = cash + reserved, reserved and available = cash, exactly', async () => {
    const { ticker } = await newMarket();
    const a = await newAccount();
    await place(a, ticker, { side: 'yes', count: '0.0001', price: '0.33' });
    expect(await balance(a)).toEqual({ balance: '1000.00', reserved: '0.000033', available: '999.999967' });
  });
});

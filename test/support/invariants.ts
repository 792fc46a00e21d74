import { expect } from 'vitest';
import type { Queryable } from '../../src/db/knex.js';

/**
 * Every trading invariant, summed from the database; each query lists
 * what breaks it, so an empty list passes:
 *   sum(cash) + sum(reserved) + 1 Dot per outstanding YES+NO pair of unresolved markets = all grants,
 * and nothing negative, no order over- or under-accounted, no book crossed, every reserve and market
 * figure equal to what the orders and positions say, every account's ledger summing to its balance.
 */
export async function checkTradingInvariants(db: Queryable): Promise<void> {
  const one = async (sql: string) => (await db.raw(sql)).rows;

  const [totals] = await one(`
    select
      (select coalesce(sum(amount), 0) from ledger_entries where kind = 'grant') as granted,
      (select coalesce(sum(cash + reserved), 0) from balances) as held,
      (select coalesce(sum(p.shares), 0) from positions p join markets m on m.id = p.market_id
        where p.side = 'yes' and m.status <> 'RESOLVED') as pairs`);
  expect(Number(totals.granted)).toBeGreaterThan(0);
  expect((await one(`
    select 1 from (select
      (select coalesce(sum(amount), 0) from ledger_entries where kind = 'grant') as granted,
      (select coalesce(sum(cash + reserved), 0) from balances) as held,
      (select coalesce(sum(p.shares), 0) from positions p join markets m on m.id = p.market_id where p.side = 'yes' and m.status <> 'RESOLVED') as pairs) t
    where held + pairs <> granted`)).length, `conservation: ${JSON.stringify(totals)}`).toBe(0);

  // Every pair has both halves: per market, YES shares = NO shares (zero once resolved).
  expect(await one(`
    select market_id, sum(shares) filter (where side = 'yes') as yes, sum(shares) filter (where side = 'no') as no
      from positions group by market_id
    having coalesce(sum(shares) filter (where side = 'yes'), 0) <> coalesce(sum(shares) filter (where side = 'no'), 0)`)).toEqual([]);
  expect(await one(`select p.id from positions p join markets m on m.id = p.market_id where m.status = 'RESOLVED' and (p.shares <> 0 or p.reserved <> 0)`)).toEqual([]);

  // Nothing negative.
  expect(await one(`select user_id from balances where cash < 0 or reserved < 0`)).toEqual([]);
  expect(await one(`select id from positions where shares < 0 or reserved < 0 or reserved > shares`)).toEqual([]);
  expect(await one(`select id from orders where remaining < 0 or filled < 0 or cancelled < 0`)).toEqual([]);

  // Orders: filled + remaining + cancelled = count; filled = what their fills say; live exactly when something remains.
  expect(await one(`select id from orders where filled + remaining + cancelled <> count or (status in ('OPEN', 'PARTIAL')) <> (remaining > 0)`)).toEqual([]);
  expect(await one(`
    select o.id from orders o left join (select order_id, sum(count) as filled from fills group by order_id) f on f.order_id = o.id
     where o.filled <> coalesce(f.filled, 0)`)).toEqual([]);
  expect(await one(`select t.id from trades t where (select count(*) from fills f where f.trade_id = t.id) <> 2`)).toEqual([]);

  // Trades and fills (which hold no foreign keys) name existing orders: a trade its maker and taker of its
  // market, a fill an existing trade and its own order, with that order's account, market, side and action.
  expect(await one(`
    select t.id from trades t
      left join orders mo on mo.id = t.maker_order_id
      left join orders tk on tk.id = t.taker_order_id
     where mo.market_id is distinct from t.market_id or tk.market_id is distinct from t.market_id`)).toEqual([]);
  expect(await one(`
    select f.id from fills f
      left join orders o on o.id = f.order_id
      left join trades t on t.id = f.trade_id
     where t.id is null or o.id is null
        or (o.account_id, o.market_id, o.side, o.action) <> (f.account_id, f.market_id, f.side, f.action)
        or o.id <> case f.role when 'maker' then t.maker_order_id else t.taker_order_id end`)).toEqual([]);
  expect(await one(`select id from orders where status in ('OPEN', 'PARTIAL') and market_id in (select id from markets where status <> 'ACTIVE')`)).toEqual([]);

  // No book crossed (expired but unswept orders included).
  expect(await one(`
    select market_id from orders where status in ('OPEN', 'PARTIAL') group by market_id
    having max(yes_price) filter (where book_side = 'bid') >= min(yes_price) filter (where book_side = 'ask')`)).toEqual([]);

  // Reserves: cash reserved = limit x remaining of live buys; shares reserved = remaining of live sells.
  expect(await one(`
    select b.user_id from balances b
      left join (select account_id, sum(price * remaining) as r from orders where action = 'buy' and status in ('OPEN', 'PARTIAL') group by account_id) o on o.account_id = b.user_id
     where b.reserved <> coalesce(o.r, 0)`)).toEqual([]);
  expect(await one(`
    select p.id from positions p
      left join (select account_id, market_id, side, sum(remaining) as r from orders where action = 'sell' and status in ('OPEN', 'PARTIAL') group by account_id, market_id, side) o
        on o.account_id = p.account_id and o.market_id = p.market_id and o.side = p.side
     where p.reserved <> coalesce(o.r, 0)`)).toEqual([]);

  // Ledger entries (which hold no foreign keys) are of accounts with a balance, and of existing markets.
  expect(await one(`
    select l.id from ledger_entries l
     where not exists (select 1 from balances b where b.user_id = l.user_id)
        or (l.market_id is not null and not exists (select 1 from markets m where m.id = l.market_id))`)).toEqual([]);
  // Every fill has one ledger entry naming it, of its account and market, and no fill entry names anything else.
  expect(await one(`
    select l.id from ledger_entries l
      left join fills f on f.id::text = l.reference
     where l.kind = 'fill' and (f.id is null or f.account_id <> l.user_id or f.market_id is distinct from l.market_id)`)).toEqual([]);
  expect(await one(`
    select f.id from fills f
     where (select count(*) from ledger_entries l where l.kind = 'fill' and l.reference = f.id::text) <> 1`)).toEqual([]);

  // The ledger: per account, sum(amount) = cash + reserved and sum(reserved_change) = reserved.
  expect(await one(`
    select b.user_id from balances b
      left join (select user_id, sum(amount) as amount, sum(reserved_change) as reserved from ledger_entries group by user_id) l on l.user_id = b.user_id
     where coalesce(l.amount, 0) <> b.cash + b.reserved or coalesce(l.reserved, 0) <> b.reserved`)).toEqual([]);

  // Market figures: liquidity = resting notional, open interest = outstanding pairs, volume = contracts traded.
  expect(await one(`
    select m.ticker from markets m
     where m.liquidity <> coalesce((select sum(price * remaining) from orders o where o.market_id = m.id and o.status in ('OPEN', 'PARTIAL')), 0)
        or m.open_interest <> coalesce((select sum(shares) from positions p where p.market_id = m.id and p.side = 'yes'), 0)
        or m.volume <> coalesce((select sum(count) from trades t where t.market_id = m.id), 0)`)).toEqual([]);
}

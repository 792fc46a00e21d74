import type { Knex } from 'knex';

/**
 * Candles: each market's trading per minute, hour and day (`period` 1, 60 and 1440: days from 00:00 UTC),
 * written by every trading transaction that changes the market (one upsert of the three rows, in its write
 * statement), so that price history reads one row per period, never the trade tape: summing a year of hours into
 * days took 60 ms of PostgreSQL's time, reading a year of days well under one. A row holds its trades' open, high, low and close (YES price; null without trades), the sum of price x
 * contracts (for the mean) and the contracts traded, and as the last transaction of the row left them: the
 * open interest and the best YES bid and ask, with the lowest and highest of each seen after any of the row's
 * transactions. No bid is 0 and no ask is 1 (Kalshi's convention), so that a missing side sorts as the worst
 * price. Rows backfilled from trades made before this table existed have no bid or ask (null).
 *
 * Fill factor 80: most writes update a row of the current minute, hour and day, in place (HOT) when its page has room.
 */
const COLUMNS = `
  market_id bigint not null,
  period smallint not null,
  start_ts timestamptz not null,
  open numeric(6, 2),
  high numeric(6, 2),
  low numeric(6, 2),
  close numeric(6, 2),
  price_volume numeric not null default 0,
  volume numeric not null default 0,
  open_interest numeric not null,
  yes_bid numeric(6, 2),
  yes_bid_low numeric(6, 2),
  yes_bid_high numeric(6, 2),
  yes_ask numeric(6, 2),
  yes_ask_low numeric(6, 2),
  yes_ask_high numeric(6, 2),
  primary key (market_id, period, start_ts),
  constraint market_candles_period_check check (period in (1, 60, 1440))`;

export async function up(knex: Knex): Promise<void> {
  await knex.raw(`create table market_candles (${COLUMNS}) with (fillfactor = 80)`);
  // Backfill from the trade tape: open interest is each market's running sum of pairs minted less pairs merged.
  await knex.raw(`
    with t as (
      select t.market_id, t.id, t.yes_price, t.count, t.created_at,
             sum(case t.kind when 'mint' then t.count when 'merge' then -t.count else 0 end)
               over (partition by t.market_id order by t.id) as open_interest
        from trades t
    )
    insert into market_candles (market_id, period, start_ts, open, high, low, close, price_volume, volume, open_interest)
    select t.market_id, p.period, date_bin(make_interval(mins => p.period), t.created_at, timestamptz 'epoch'),
           (array_agg(t.yes_price order by t.id))[1], max(t.yes_price), min(t.yes_price), (array_agg(t.yes_price order by t.id desc))[1],
           sum(t.yes_price * t.count), sum(t.count), (array_agg(t.open_interest order by t.id desc))[1]
      from t cross join (values (1), (60), (1440)) as p (period)
     group by 1, 2, 3`);
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw('drop table if exists market_candles');
}

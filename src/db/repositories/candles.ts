import type { Db, Queryable } from '../knex.js';
import { LIVE } from '../tables.js';

/**
 * The candles (market_candles, migrations 0030 and 0032): written by refreshCandles from the trade tape and
 * the book, read as periods of any length. Decimals as strings, times as Unix seconds. Rows of `source`
 * minutes are summed into periods of `seconds`, a multiple of the source, aligned to the Unix epoch.
 */

/** The periods that rows are kept for, in minutes. */
export type Source = 1 | 60 | 1440;

/**
 * A period's sums, from the rows that start in it: prices as ticks (hundredths of a Dot; null without
 * trades, and bid and ask null where not recorded), counts and sums as decimal strings.
 */
export interface CandleRow {
  /** Unix seconds at which the period ends (its rows start before). */
  end_ts: number;
  open: number | null;
  high: number | null;
  low: number | null;
  close: number | null;
  price_volume: string;
  volume: string;
  open_interest: string;
  yes_bid: number | null;
  yes_bid_low: number | null;
  yes_bid_high: number | null;
  yes_ask: number | null;
  yes_ask_low: number | null;
  yes_ask_high: number | null;
}

/** What was last known before a time: the last trade's price, the open interest, best bid and ask (ticks). */
export interface CandleState {
  close: number | null;
  open_interest: string | null;
  yes_bid: number | null;
  yes_ask: number | null;
}

const ticks = (expression: string, name: string) => `(${expression} * 100)::int as ${name}`;

/** A row's own columns, for periods as long as the rows. */
const ROW_COLUMNS = [
  ticks('open', 'open'),
  ticks('high', 'high'),
  ticks('low', 'low'),
  ticks('close', 'close'),
  'price_volume::text as price_volume',
  'volume::text as volume',
  'open_interest::text as open_interest',
  ...['yes_bid', 'yes_bid_low', 'yes_bid_high', 'yes_ask', 'yes_ask_low', 'yes_ask_high'].map((c) => ticks(c, c)),
].join(', ');

/** The rows of a longer period summed (first, last: by start_ts). */
const PERIOD_COLUMNS = [
  ticks('(array_agg(open order by start_ts) filter (where open is not null))[1]', 'open'),
  ticks('max(high)', 'high'),
  ticks('min(low)', 'low'),
  ticks('(array_agg(close order by start_ts desc) filter (where close is not null))[1]', 'close'),
  'sum(price_volume)::text as price_volume',
  'sum(volume)::text as volume',
  '((array_agg(open_interest order by start_ts desc))[1])::text as open_interest',
  ticks('(array_agg(yes_bid order by start_ts desc) filter (where yes_bid is not null))[1]', 'yes_bid'),
  ticks('min(yes_bid_low)', 'yes_bid_low'),
  ticks('max(yes_bid_high)', 'yes_bid_high'),
  ticks('(array_agg(yes_ask order by start_ts desc) filter (where yes_ask is not null))[1]', 'yes_ask'),
  ticks('min(yes_ask_low)', 'yes_ask_low'),
  ticks('max(yes_ask_high)', 'yes_ask_high'),
].join(', ');

/**
 * Periods of `seconds` that hold rows of `source` minutes starting in [from, to) (Unix seconds), in time order:
 * the rows themselves when the periods are as long, else their sums.
 */
export async function candlePeriods(db: Queryable, marketId: string, source: Source, seconds: number, from: number, to: number): Promise<CandleRow[]> {
  const own = seconds === source * 60;
  const result = await db.raw<{ rows: CandleRow[] }>(
    `select (floor(extract(epoch from start_ts) / :seconds) * :seconds + :seconds)::int8 as end_ts, ${own ? ROW_COLUMNS : PERIOD_COLUMNS}
       from market_candles
      where market_id = :marketId and period = :source and start_ts >= to_timestamp(:from) and start_ts < to_timestamp(:to)
      ${own ? '' : 'group by 1'}
      order by 1`,
    { marketId, source, seconds, from, to },
  );
  for (const row of result.rows) row.end_ts = Number(row.end_ts);
  return result.rows;
}

/** The state before `before` (Unix seconds): from the last row of `source` minutes starting before it, and the last with trades. */
export async function candleStateBefore(db: Queryable, marketId: string, source: Source, before: number): Promise<CandleState> {
  const result = await db.raw<{ rows: CandleState[] }>(
    `select (select (c.close * 100)::int from market_candles c
               where c.market_id = :marketId and c.period = :source and c.start_ts < to_timestamp(:before) and c.close is not null
               order by c.start_ts desc limit 1) as close,
            l.open_interest::text as open_interest, (l.yes_bid * 100)::int as yes_bid, (l.yes_ask * 100)::int as yes_ask
       from (select 1) as one
       left join lateral (
         select c.open_interest, c.yes_bid, c.yes_ask from market_candles c
          where c.market_id = :marketId and c.period = :source and c.start_ts < to_timestamp(:before)
          order by c.start_ts desc limit 1
       ) as l on true`,
    { marketId, source, before },
  );
  return result.rows[0]!;
}

/** Markets by ticker (upper case) with their series' ticker. */
export async function findMarketsWithSeries(db: Queryable, tickers: readonly string[]): Promise<Array<{ id: string; ticker: string; series_ticker: string }>> {
  const result = await db.raw<{ rows: Array<{ id: string; ticker: string; series_ticker: string }> }>(
    `select m.id::text as id, m.ticker, s.ticker as series_ticker
       from markets m join events e on e.id = m.event_id join series s on s.id = e.series_id
      where m.ticker = any(:tickers::text[])`,
    { tickers: [...tickers] },
  );
  return result.rows;
}

const PERIODS = '(values (1), (60), (1440)) as p (period)';
const bucket = (time: string) => `date_bin(make_interval(mins => p.period), ${time}, timestamptz 'epoch')`;

/**
 * The trades of these markets after their marks, added to their candles (minute, hour and day), and the marks
 * moved past them. Each trade's open interest is the market's now less what the market's later trades added.
 * One statement, so that trades and open interest are read from one snapshot.
 */
const ADD_TRADES = `
  with t as (
    select t.market_id, t.id, t.yes_price, t.count, t.created_at,
           m.open_interest - coalesce(sum(case t.kind when 'mint' then t.count when 'merge' then -t.count else 0 end)
             over (partition by t.market_id order by t.id desc rows between unbounded preceding and 1 preceding), 0) as open_interest
      from market_candle_marks k
      join markets m on m.id = k.market_id
      join trades t on t.market_id = k.market_id and t.id > k.last_trade_id
     where k.market_id = any(:marketIds::bigint[])
  ),
  added as (
    insert into market_candles as c (market_id, period, start_ts, open, high, low, close, price_volume, volume, open_interest)
    select t.market_id, p.period, ${bucket('t.created_at')},
           (array_agg(t.yes_price order by t.id))[1], max(t.yes_price), min(t.yes_price), (array_agg(t.yes_price order by t.id desc))[1],
           sum(t.yes_price * t.count), sum(t.count), (array_agg(t.open_interest order by t.id desc))[1]
      from t cross join ${PERIODS}
     group by 1, 2, 3
    on conflict (market_id, period, start_ts) do update set
      open = coalesce(c.open, excluded.open),
      high = greatest(c.high, excluded.high),
      low = least(c.low, excluded.low),
      close = excluded.close,
      price_volume = c.price_volume + excluded.price_volume,
      volume = c.volume + excluded.volume,
      open_interest = excluded.open_interest
    returning 1
  )
  update market_candle_marks k set last_trade_id = l.id
    from (select market_id, max(id) as id from t group by market_id) l
   where k.market_id = l.market_id`;

/** Best live YES bid (`bid`, highest price, 0 without one) or ask (`ask`, lowest, 1 without one) of market `m`. */
const best = (side: 'bid' | 'ask') => `coalesce((
    select o.yes_price from orders o
     where o.market_id = m.id and o.book_side = '${side}' and o.${LIVE} and (o.expiration_ts is null or o.expiration_ts > now())
     order by o.yes_price ${side === 'bid' ? 'desc' : 'asc'} limit 1), ${side === 'bid' ? 0 : 1})`;

/** The markets' open interest and best bid and ask now, as the close of their current minute, hour and day. */
const RECORD_BOOK = `
  insert into market_candles as c (market_id, period, start_ts, open_interest, yes_bid, yes_bid_low, yes_bid_high, yes_ask, yes_ask_low, yes_ask_high)
  select m.id, p.period, ${bucket('now()')}, m.open_interest, q.bid, q.bid, q.bid, q.ask, q.ask, q.ask
    from markets m
    cross join lateral (select ${best('bid')} as bid, ${best('ask')} as ask) q
    cross join ${PERIODS}
   where m.id = any(:marketIds::bigint[])
  on conflict (market_id, period, start_ts) do update set
    open_interest = excluded.open_interest,
    yes_bid = excluded.yes_bid,
    yes_bid_low = least(c.yes_bid_low, excluded.yes_bid),
    yes_bid_high = greatest(c.yes_bid_high, excluded.yes_bid),
    yes_ask = excluded.yes_ask,
    yes_ask_low = least(c.yes_ask_low, excluded.yes_ask),
    yes_ask_high = greatest(c.yes_ask_high, excluded.yes_ask)`;

/**
 * Brings these markets' candles up to date: their trades not yet counted, then their book as it is now. The
 * markets' marks are locked first (in id order), so that processes refreshing the same market take turns
 * and each trade is counted once. Idempotent: a refresh that fails changes nothing and can simply be repeated.
 */
export async function refreshCandles(db: Db, marketIds: readonly string[]): Promise<void> {
  if (marketIds.length === 0) return;
  const ids = [...marketIds].sort((a, b) => Number(BigInt(a) - BigInt(b)));
  await db.transaction(async (tx) => {
    await tx.raw('insert into market_candle_marks (market_id, last_trade_id) select unnest(:ids::bigint[]), 0 on conflict do nothing', { ids });
    await tx.raw('select 1 from market_candle_marks where market_id = any(:ids::bigint[]) order by market_id for update', { ids });
    await tx.raw(ADD_TRADES, { marketIds: ids });
    await tx.raw(RECORD_BOOK, { marketIds: ids });
  });
}

/** Markets with trades their candles do not hold yet (committed by a process that stopped before refreshing them). */
export async function marketsBehindCandles(db: Queryable): Promise<string[]> {
  const result = await db.raw<{ rows: Array<{ id: string }> }>(
    `select m.id::text as id from markets m left join market_candle_marks k on k.market_id = m.id
      where exists (select 1 from trades t where t.market_id = m.id and t.id > coalesce(k.last_trade_id, 0))`,
  );
  return result.rows.map((r) => r.id);
}

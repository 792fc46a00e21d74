import type { Queryable } from '../knex.js';

/**
 * Reads of the candles (market_candles, migration 0030) that trading transactions write. Decimals as strings,
 * times as Unix seconds. Rows of `source` minutes are summed into periods of `seconds`, a multiple of the
 * source, aligned to the Unix epoch.
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

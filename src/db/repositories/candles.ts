import type { Queryable } from '../knex.js';

/**
 * Reads of the candles (market_candles, migration 0030) that trading transactions write. Decimals as strings,
 * times as Unix seconds. Rows of `source` minutes (1 or 60) are summed into periods of `seconds`, a multiple
 * of the source, aligned to the Unix epoch.
 */

/** A period's sums, from the rows that start in it (prices null without trades; bid and ask null if not recorded). */
export interface CandleRow {
  /** Unix seconds at which the period ends (its rows start before). */
  end_ts: number;
  open: string | null;
  high: string | null;
  low: string | null;
  close: string | null;
  price_volume: string;
  volume: string;
  open_interest: string;
  yes_bid: string | null;
  yes_bid_low: string | null;
  yes_bid_high: string | null;
  yes_ask: string | null;
  yes_ask_low: string | null;
  yes_ask_high: string | null;
}

/** What was last known before a time: the last trade's price, the open interest, best bid and ask. */
export interface CandleState {
  close: string | null;
  open_interest: string | null;
  yes_bid: string | null;
  yes_ask: string | null;
}

/** Periods of `seconds` that hold rows starting in [from, to) (Unix seconds), in time order. */
export async function candlePeriods(db: Queryable, marketId: string, source: 1 | 60, seconds: number, from: number, to: number): Promise<CandleRow[]> {
  const result = await db.raw<{ rows: CandleRow[] }>(
    `select (floor(extract(epoch from start_ts) / :seconds) * :seconds + :seconds)::bigint as end_ts,
            ((array_agg(open order by start_ts) filter (where open is not null))[1])::text as open,
            max(high)::text as high,
            min(low)::text as low,
            ((array_agg(close order by start_ts desc) filter (where close is not null))[1])::text as close,
            sum(price_volume)::text as price_volume,
            sum(volume)::text as volume,
            ((array_agg(open_interest order by start_ts desc))[1])::text as open_interest,
            ((array_agg(yes_bid order by start_ts desc) filter (where yes_bid is not null))[1])::text as yes_bid,
            min(yes_bid_low)::text as yes_bid_low,
            max(yes_bid_high)::text as yes_bid_high,
            ((array_agg(yes_ask order by start_ts desc) filter (where yes_ask is not null))[1])::text as yes_ask,
            min(yes_ask_low)::text as yes_ask_low,
            max(yes_ask_high)::text as yes_ask_high
       from market_candles
      where market_id = :marketId and period = :source and start_ts >= to_timestamp(:from) and start_ts < to_timestamp(:to)
      group by 1
      order by 1`,
    { marketId, source, seconds, from, to },
  );
  return result.rows.map((r) => ({ ...r, end_ts: Number(r.end_ts) }));
}

/** The state before `before` (Unix seconds): from the last row of `source` minutes starting before it, and the last with trades. */
export async function candleStateBefore(db: Queryable, marketId: string, source: 1 | 60, before: number): Promise<CandleState> {
  const result = await db.raw<{ rows: CandleState[] }>(
    `select (select c.close::text from market_candles c
               where c.market_id = :marketId and c.period = :source and c.start_ts < to_timestamp(:before) and c.close is not null
               order by c.start_ts desc limit 1) as close,
            l.open_interest::text as open_interest, l.yes_bid::text as yes_bid, l.yes_ask::text as yes_ask
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

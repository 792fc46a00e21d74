/**
 * What bench:catalogue measures: its endpoints' bodies and rows, and the busy market whose price history and
 * order book it measures (docs/performance.md), made once in the bench's database and kept between runs.
 */
import pg from 'pg';
import { api, register, RUN } from './lib.js';

/** The fields of the endpoints' JSON bodies (the service's and the baseline's) that the bench reads. */
export interface Body {
  events: Array<{ id: unknown; markets: Array<{ id: unknown }> }>;
  next_cursor: string | null;
  cursor: string | null;
  data: Array<{ id: unknown }>;
  pagination: unknown;
  results: Array<{ kind: string; id: unknown }>;
  tags: Array<{ id: unknown }>;
  profiles: Array<{ id: unknown }>;
  hasMore: unknown;
  totalResults: unknown;
  candlesticks: Array<{ end_period_ts: number; price: { close_dollars?: string }; volume_fp: string }>;
  orderbook: { yes: string[][]; no: string[][] };
  bids: Array<{ price: string; size: string }>;
  asks: Array<{ price: string; size: string }>;
}

export interface Endpoint {
  name: string;
  /** Path and query on the service (and on the baseline app, unless `baseline`). */
  service: string;
  baseline?: string;
  /** What must agree between the two answers: the items in order (and counts); of the baseline's, `baselineKey` when given. */
  key: (body: Body) => unknown;
  baselineKey?: (body: Body) => unknown;
  /** Held to the searches' own targets (TARGET_SEARCH_P99_MS, TARGET_SEARCH_RPS) too. */
  searchTarget?: boolean;
  /** Its share of the baseline's requests/s printed, but not held to TARGET_SHARE (the misses: see the top). */
  shareWithoutTarget?: boolean;
  /** Held to TARGET_CANDLES_P99_MS (the busy market's candlesticks). */
  candlesTarget?: boolean;
  /** A busy market's row: its share and p99 printed, held to no target of the catalogue's reads. */
  busyMarket?: boolean;
}

/** The market measured for its price history and book, and the end of its history (Unix seconds). */
export type BusyMarket = { id: string; ticker: string; series: string; yesToken: string; end: number };

const MINUTES_A_YEAR = 365 * 24 * 60;
const RESTING_ORDERS = 500;

/**
 * The busy market: the ACTIVE market whose event strikes last, given once 500 resting orders (a new account
 * places them through the API, 10 contracts each: YES bids and NO bids at 0.01 to 0.49, so none crosses) and then
 * a year of candles up to the minute before (rows of 1 minute by generate_series, a trade every minute, prices
 * wandering between 0.10 and 0.90; the hours and days their minutes summed).
 */
export async function prepareBusyMarket(databaseUrl: string, serviceUrl: string, log: (line: string) => void): Promise<BusyMarket> {
  const client = new pg.Client({ connectionString: databaseUrl });
  await client.connect();
  try {
    const market = (
      await client.query<Omit<BusyMarket, 'end'>>(
        `select m.id::text as id, m.ticker, s.ticker as series, m.yes_token_id as "yesToken"
           from markets m join events e on e.id = m.event_id join series s on s.id = e.series_id
          where m.status = 'ACTIVE' order by e.strike_date desc, m.id limit 1`,
      )
    ).rows[0]!;
    const count = async (sql: string) => (await client.query<{ n: number }>(sql, [market.id])).rows[0]!.n;
    const resting = await count(`select count(*)::int as n from orders where market_id = $1 and status in ('OPEN', 'PARTIAL')`);
    if (resting < RESTING_ORDERS) {
      log(`placing ${RESTING_ORDERS - resting} resting orders on ${market.ticker}`);
      const { token } = await register(serviceUrl, `bench-book-${RUN.toLowerCase()}@dots.local`);
      for (let n = resting; n < RESTING_ORDERS; n += 20) {
        const order = (k: number) => ({ ticker: market.ticker, side: k % 2 === 0 ? 'yes' : 'no', action: 'buy', count: '10', price: (0.01 + ((k >> 1) % 49) / 100).toFixed(2) });
        const orders = Array.from({ length: Math.min(20, RESTING_ORDERS - n) }, (_, i) => order(n + i));
        const placed = (await api<{ orders: Array<{ error: unknown }> }>(serviceUrl, 'POST', '/api/portfolio/orders/batched', { orders }, token)).orders.find((item) => item.error);
        if (placed) throw new Error(`placing the busy market's orders: ${JSON.stringify(placed)}`);
      }
    }
    if ((await count('select count(*)::int as n from market_candles where market_id = $1 and period = 1')) !== MINUTES_A_YEAR) {
      log(`writing a year of candles for ${market.ticker}`);
      await client.query('delete from market_candles where market_id = $1', [market.id]);
      const columns = 'market_id, period, start_ts, open, high, low, close, price_volume, volume, open_interest, yes_bid, yes_bid_low, yes_bid_high, yes_ask, yes_ask_low, yes_ask_high';
      await client.query(
        `with minutes as (
           insert into market_candles (${columns})
           select $1, 1, date_trunc('minute', now()) - make_interval(mins => $2::int + 1 - n), p.open, greatest(p.open, p.close) + 0.01, least(p.open, p.close) - 0.01,
                  p.close, p.close * 10, 10, 10 * n, p.close - 0.01, p.close - 0.02, p.close, p.close + 0.01, p.close, p.close + 0.02
             from generate_series(1, $2::int) as n
            cross join lateral (select round((0.5 + 0.4 * sin(n / 500.0))::numeric, 2) as open, round((0.5 + 0.4 * sin((n + 1) / 500.0))::numeric, 2) as close) as p
           returning *)
         insert into market_candles (${columns})
         select market_id, p.minutes, date_bin(make_interval(mins => p.minutes), start_ts, timestamptz 'epoch'), (array_agg(open order by start_ts))[1],
                max(high), min(low), (array_agg(close order by start_ts desc))[1], sum(price_volume), sum(volume), (array_agg(open_interest order by start_ts desc))[1],
                (array_agg(yes_bid order by start_ts desc))[1], min(yes_bid_low), max(yes_bid_high), (array_agg(yes_ask order by start_ts desc))[1], min(yes_ask_low), max(yes_ask_high)
           from minutes cross join (values (60), (1440)) as p (minutes)
          group by 1, 2, 3`,
        [market.id, MINUTES_A_YEAR],
      );
      await client.query('vacuum (analyze) market_candles');
    }
    const end = await count('select extract(epoch from max(start_ts))::int + 60 as n from market_candles where market_id = $1 and period = 1');
    return { ...market, end };
  } finally {
    await client.end();
  }
}

/** A book's levels as numbers ([price, count]), the baseline's rows (book_side, yes_price, count) seen from `side`. */
type Level = { book_side: 'bid' | 'ask'; yes_price: string; count: string };
const levels = (rows: Level[], side: Level['book_side'], price: (yes: number) => number, order: 1 | -1) =>
  rows.filter((row) => row.book_side === side).map((row) => [Math.round(price(Number(row.yes_price)) * 100) / 100, Number(row.count)]).sort((a, b) => order * (a[0]! - b[0]!));
const numeric = (pairs: string[][]) => pairs.map((pair) => pair.map(Number));

/** The busy market's candlesticks over the windows a chart shows, each ending where its history ends, and its book. */
export function marketEndpoints(busy: BusyMarket): Endpoint[] {
  const candles = [
    { period: 1, days: 1, what: 'a day' },
    { period: 60, days: 30, what: '30 days' },
    { period: 1440, days: 365, what: 'a year' },
  ].map(({ period, days, what }): Endpoint => {
    const seconds = period * 60;
    const start = busy.end - days * 86_400;
    // The rows the service reads (of the period's own length): from the start of the first period ending at or after start to the end of the last by end.
    const [from, to] = [Math.ceil(start / seconds) * seconds - seconds, Math.floor(busy.end / seconds) * seconds];
    return {
      name: `GET /api/series/{s}/markets/{t}/candlesticks (busy market, ${period}-minute, ${what})`,
      service: `/api/series/${busy.series}/markets/${busy.ticker}/candlesticks?start_ts=${start}&end_ts=${busy.end}&period_interval=${period}`,
      baseline: `/candles?market=${busy.id}&period=${period}&from=${from}&to=${to}`,
      key: (body) => body.candlesticks.map((c) => [c.end_period_ts, Number(c.price.close_dollars), Number(c.volume_fp)]),
      baselineKey: (body) => (body as unknown as Array<{ end_ts: string; close: string; volume: string }>).map((r) => [Number(r.end_ts), Number(r.close), Number(r.volume)]),
      candlesTarget: true,
    };
  });
  const rows = (body: Body) => body as unknown as Level[];
  const endpoints: Endpoint[] = [
    ...candles,
    {
      name: `GET /api/markets/{ticker}/orderbook (busy market, ${RESTING_ORDERS} orders)`,
      service: `/api/markets/${busy.ticker}/orderbook`,
      baseline: `/book?market=${busy.id}`,
      key: (body) => [numeric(body.orderbook.yes), numeric(body.orderbook.no)],
      baselineKey: (body) => [levels(rows(body), 'bid', (p) => p, -1), levels(rows(body), 'ask', (p) => 1 - p, -1)],
    },
    {
      name: `GET /api/clob/book?token_id= (busy market's YES, ${RESTING_ORDERS} orders)`,
      service: `/api/clob/book?token_id=${busy.yesToken}`,
      baseline: `/book?market=${busy.id}`,
      key: (body) => [body.bids, body.asks].map((side) => side.map((level) => [Number(level.price), Number(level.size)])),
      baselineKey: (body) => [levels(rows(body), 'bid', (p) => p, 1), levels(rows(body), 'ask', (p) => p, -1)],
    },
  ];
  return endpoints.map((endpoint) => ({ ...endpoint, busyMarket: true }));
}

/**
 * The baselines of bench:catalogue, one bare Koa handler per measured request, no OpenAPI dispatch, no
 * presenter. Each list runs one hand-written statement on a plain `pg.Pool` that reads what the service reads
 * for the request the bench makes (the same filter, order, page size, counts and nested rows; not every
 * parameter of the endpoint); each search calls the service's own search (its word index and statements), so
 * that its baseline measures what the service adds around the index's and the database's work.
 */
import Koa from 'koa';
import pg from 'pg';
import type { Services } from '../src/services.js';
import type { Defer } from './lib.js';

/** Same pool size as the service's main pool. */
export const POOL_MAX = 10;

const EVENT_COLUMNS = `
  e.id, e.ticker, e.slug, e.title, e.description, e.mutually_exclusive, e.status, e.start_date, e.strike_date, e.closed_time,
  e.volume, e.liquidity, e.open_interest, e.created_at, e.updated_at, e.series_id,
  s.ticker as series_ticker, s.slug as series_slug, s.title as series_title,
  (e.status = 'ACTIVE' and e.start_date <= now() and now() < e.strike_date) as live,
  (e.strike_date <= now() or e.status <> 'ACTIVE') as ended`;

/** `/events?limit=N`: ACTIVE events (the defaults active=true, closed=false), newest first. */
const SQL_EVENTS = `
  select ${EVENT_COLUMNS}
    from events e join series s on s.id = e.series_id
   where e.status = 'ACTIVE'
   order by e.created_at desc, e.id desc
   limit $1`;

/** `/events/keyset?limit=N[&after_cursor=...]`: ACTIVE events (closed=false) by id ascending, after an id; one more row tells whether a next page exists. */
const SQL_KEYSET = `
  select ${EVENT_COLUMNS}, e.id::text as sort_value
    from events e join series s on s.id = e.series_id
   where e.status = 'ACTIVE' and e.id > $2
   order by e.id
   limit $1`;

/** `/events/pagination?limit=N`: `/events`' page, and the ACTIVE events up to the scan window (10,000), read from their counter as the service reads them. */
const SQL_PAGINATION = `
  select c.total, p.*
    from (select least(coalesce(sum(events), 0), 10000)::int as total from event_status_counts where status = 'ACTIVE') c
    left join (${SQL_EVENTS}) p on true`;

/** `/api/events?with_nested_markets=true[&limit=N]`: every event newest first, each with its markets (oldest first). */
const SQL_NATIVE_EVENTS = `
  select e.*, s.ticker as series_ticker, s.slug as series_slug,
         to_char(e.created_at at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"') as sort_created_at,
         coalesce(m.markets, '[]'::json) as markets
    from events e
    join series s on s.id = e.series_id
    left join lateral (
      select json_agg(json_build_object(
               'id', m.id::text, 'ticker', m.ticker, 'event_id', m.event_id::text, 'event_ticker', e.ticker, 'title', m.title, 'status', m.status,
               'last_yes_price', m.last_yes_price::text, 'last_no_price', m.last_no_price::text, 'volume', m.volume::text, 'liquidity', m.liquidity::text)
             order by m.id) as markets
        from markets m where m.event_id = e.id
    ) m on true
   order by e.created_at desc, e.id desc
   limit $1`;

/** `/candles?market&period&from&to`: a market's rows of `period` minutes starting in [from, to), each with the end of its period. */
const SQL_CANDLES = `
  select extract(epoch from start_ts)::int8 + 60 * period as end_ts, * from market_candles
   where market_id = $1 and period = $2 and start_ts >= to_timestamp($3) and start_ts < to_timestamp($4)
   order by start_ts`;

/** `/book?market`: a market's resting contracts per side and YES price. */
const SQL_BOOK = `
  select book_side, yes_price, sum(remaining)::text as count from orders
   where market_id = $1 and status in ('OPEN', 'PARTIAL') and (expiration_ts is null or expiration_ts > now())
   group by 1, 2`;

/** The baseline app: one route per measured request, 404 to anything else; its pool ends with the bench. */
export function createBaseline(databaseUrl: string, services: Services, defer: Defer): Koa {
  // The session setting of every service connection: no parallel query.
  const plain = new pg.Pool({ connectionString: databaseUrl, max: POOL_MAX, options: '-c max_parallel_workers_per_gather=0' });
  const limitOf = (value: unknown, fallback: number, max: number) => Math.min(Number(value ?? fallback) || fallback, max);

  const routes: Record<string, (ctx: Koa.Context) => Promise<unknown>> = {
    '/events': async (ctx) => (await plain.query<{ id: string }>(SQL_EVENTS, [limitOf(ctx.query.limit, 20, 100)])).rows,
    '/events/keyset': async (ctx) => {
      const limit = limitOf(ctx.query.limit, 20, 500);
      const after = ctx.query.after === undefined ? 0 : Number(ctx.query.after);
      const { rows } = await plain.query<{ id: string }>(SQL_KEYSET, [limit + 1, after]);
      const events = rows.slice(0, limit);
      return { events, next_cursor: rows.length > limit ? events.at(-1)!.id : null };
    },
    '/events/pagination': async (ctx) => {
      const limit = limitOf(ctx.query.limit, 20, 100);
      const { rows } = await plain.query<{ id: string | null; total: number }>(SQL_PAGINATION, [limit]);
      const total = rows[0]?.total ?? 0;
      const data = rows.filter((row) => row.id !== null).map(({ total: _, ...row }) => row);
      return { data, pagination: { hasMore: data.length < total, totalResults: total } };
    },
    '/api/events': async (ctx) => {
      const limit = limitOf(ctx.query.limit, 20, 100);
      const { rows } = await plain.query<{ id: string; sort_created_at: string }>(SQL_NATIVE_EVENTS, [limit + 1]);
      const events = rows.slice(0, limit);
      const last = events.at(-1);
      return { cursor: rows.length > limit && last ? `${last.sort_created_at}|${last.id}` : null, events };
    },
    '/candles': async ({ query: { market, period, from, to } }) => (await plain.query<Record<string, unknown>>(SQL_CANDLES, [market, period, from, to])).rows,
    '/book': async (ctx) => (await plain.query<Record<string, unknown>>(SQL_BOOK, [ctx.query.market])).rows,
    '/api/search': (ctx) => services.catalogueSearch.search({ q: String(ctx.query.q ?? '') }),
    '/public-search': (ctx) => services.publicSearch.search({ q: String(ctx.query.q ?? '') }),
  };

  const app = new Koa().use(async (ctx) => {
    const route = Object.hasOwn(routes, ctx.path) ? routes[ctx.path] : undefined;
    if (!route) ctx.throw(404);
    ctx.body = await route!(ctx);
  });
  defer(() => plain.end());
  return app;
}

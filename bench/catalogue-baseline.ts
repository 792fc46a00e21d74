/**
 * The baselines of `npm run bench:catalogue`: what each measured catalogue request costs when written by
 * hand, one Koa handler on a plain `pg.Pool`, no OpenAPI dispatch, no query builder, no presenter. Each
 * handler runs one hand-written statement that reads what the service reads for that request (the same
 * filter, order, page size, counts and nested rows, as the service's repositories define them) and answers
 * the rows as JSON. The benchmark checks, before measuring, that each baseline answers the same items in the
 * same order as the service.
 *
 * The hand-written SQL covers the requests the benchmark makes (default filters, no tag or status
 * parameters), not every parameter of the endpoints.
 */
import Koa from 'koa';
import pg from 'pg';
import { NamedStatement } from '../src/db/knex.js';
import { SEARCH_POOL_MAX, poolSettings } from '../src/db/pools.js';
import { PUBLIC_SEARCH_SQL } from '../src/db/repositories/public-search.js';
import { SEARCH_SQL } from '../src/db/repositories/search.js';
import { CHANGED_SINCE } from '../src/db/repositories/search-index.js';
import type { LiveSearchIndex } from '../src/domain/catalogue/live-search-index.js';
import { COUNT_CAP } from '../src/domain/catalogue/public-search.js';
import { CANDIDATES_PER_RESULT, listOf, searchCandidates } from '../src/domain/catalogue/search.js';
import { withinFirst } from '../src/domain/catalogue/search-index.js';

/** Same pool size as the service's (src/db/knex.ts, createDb). */
export const POOL_MAX = 10;
/** `/public-search` gets as many connections as the service's searches (src/server.ts). */
export { SEARCH_POOL_MAX };

const EVENT_COLUMNS = `
  e.id, e.ticker, e.slug, e.title, e.description, e.mutually_exclusive, e.status, e.start_date, e.strike_date, e.closed_time,
  e.volume, e.liquidity, e.open_interest, e.created_at, e.updated_at, e.series_id,
  s.ticker as series_ticker, s.slug as series_slug, s.title as series_title,
  (e.status = 'ACTIVE' and e.start_date <= now() and now() < e.strike_date) as live,
  (e.strike_date <= now() or e.status <> 'ACTIVE') as ended`;

/** `/events?limit=N`: ACTIVE events (the defaults active=true, closed=false), newest first. */
export const SQL_EVENTS = `
  select ${EVENT_COLUMNS}
    from events e join series s on s.id = e.series_id
   where e.status = 'ACTIVE'
   order by e.created_at desc, e.id desc
   limit $1`;

/** `/events/keyset?limit=N[&after_cursor=...]`: ACTIVE events (closed=false) by id ascending, after an id; one more row tells whether a next page exists. */
export const SQL_KEYSET = `
  select ${EVENT_COLUMNS}, e.id::text as sort_value
    from events e join series s on s.id = e.series_id
   where e.status = 'ACTIVE' and e.id > $2
   order by e.id
   limit $1`;

/**
 * `/events/pagination?limit=N`: the page of `/events`, and the ACTIVE events up to the offset scan window (10,000),
 * read from their counter (event_status_counts) as the service reads it for a filter of status alone.
 */
export const SQL_PAGINATION = `
  select c.total, p.*
    from (select least(coalesce(sum(events), 0), 10000)::int as total from event_status_counts where status = 'ACTIVE') c
    left join (${SQL_EVENTS}) p on true`;

/** `/api/events?with_nested_markets=true[&limit=N]`: every event newest first, each with its markets (oldest first). */
export const SQL_NATIVE_EVENTS = `
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

/**
 * The searches (`/api/search`, `/public-search` without filters): the service's word index (src/domain/
 * catalogue/live-search-index.ts: one per process, brought up to date before each search), the service's
 * choice of candidates, and the service's own statements reading them (no shorter hand-written statement
 * reads what they read), named and planned once per connection without their values, as the service's search
 * pools run them (in the positional form the repositories send: src/db/knex.ts NamedStatement): the baseline
 * measures what the service adds around the index's and the database's work.
 */
const searchChanged = new NamedStatement('baseline_search_changed', `select ${CHANGED_SINCE} as changed`);
const searchHits = new NamedStatement('baseline_search', SEARCH_SQL);
const publicSearchHits = new NamedStatement('baseline_public_search', PUBLIC_SEARCH_SQL);

export interface Baseline {
  app: Koa;
  close(): Promise<void>;
}

/** The baseline app: one route per measured request; answers 404 to anything else. */
export function createBaseline(databaseUrl: string, index: LiveSearchIndex): Baseline {
  // The session settings of every service connection (src/db/knex.ts); the searches', those of their pools
  // (generic plans, sequential scans off: src/db/pools.ts), each with as many connections as the service's.
  const serviceSettings = '-c max_parallel_workers_per_gather=0';
  const plain = new pg.Pool({ connectionString: databaseUrl, max: POOL_MAX, options: serviceSettings });
  const searchOptions = (name: 'catalogueSearchDb' | 'publicSearchDb') =>
    Object.entries(poolSettings(name)).map(([setting, value]) => `-c ${setting}=${value}`).join(' ');
  const search = new pg.Pool({ connectionString: databaseUrl, max: SEARCH_POOL_MAX, options: searchOptions('catalogueSearchDb') });
  const publicSearch = new pg.Pool({ connectionString: databaseUrl, max: SEARCH_POOL_MAX, options: searchOptions('publicSearchDb') });

  const changedSince = async (since: string) =>
    (await search.query({ name: searchChanged.name, ...searchChanged.positional({ q_since: since }) })).rows[0].changed as boolean;
  const bindingsOf = (lists: Record<string, { ids: string[]; tiers: number[]; words: number[] }>, limit: number) => ({
    limit,
    ...Object.fromEntries(Object.entries(lists).flatMap(([name, list]) => [[`${name}_ids`, list.ids], [`${name}_tiers`, list.tiers], [`${name}_words`, list.words]])),
  });
  const limitOf = (value: unknown, fallback: number, max: number) => Math.min(Number(value ?? fallback) || fallback, max);

  const routes: Record<string, (ctx: Koa.Context) => Promise<unknown>> = {
    '/events': async (ctx) => (await plain.query(SQL_EVENTS, [limitOf(ctx.query.limit, 20, 100)])).rows,
    '/events/keyset': async (ctx) => {
      const limit = limitOf(ctx.query.limit, 20, 500);
      const after = ctx.query.after === undefined ? 0 : Number(ctx.query.after);
      const { rows } = await plain.query(SQL_KEYSET, [limit + 1, after]);
      const events = rows.slice(0, limit);
      return { events, next_cursor: rows.length > limit ? events.at(-1).id : null };
    },
    '/events/pagination': async (ctx) => {
      const limit = limitOf(ctx.query.limit, 20, 100);
      const { rows } = await plain.query(SQL_PAGINATION, [limit]);
      const total = rows[0]?.total ?? 0;
      const data = rows.filter((row) => row.id !== null).map(({ total: _, ...row }) => row);
      return { data, pagination: { hasMore: data.length < total, totalResults: total } };
    },
    '/api/events': async (ctx) => {
      const limit = limitOf(ctx.query.limit, 20, 100);
      const { rows } = await plain.query(SQL_NATIVE_EVENTS, [limit + 1]);
      const events = rows.slice(0, limit);
      const last = events.at(-1);
      return { cursor: rows.length > limit && last ? `${last.sort_created_at}|${last.id}` : null, events };
    },
    '/api/search': async (ctx) => {
      const text = String(ctx.query.q ?? '').trim();
      const limit = limitOf(ctx.query.limit, 12, 30);
      const results = await index.read(async (words, since) => {
        const candidates = searchCandidates(words, words.query(text), limit);
        if (Object.values(candidates).every((list) => list.ids.length === 0)) return { changed: await changedSince(since), value: [] };
        const statement = searchHits.positional({ ...bindingsOf(candidates, limit), q_since: since });
        const { changed, hits } = (await search.query({ name: searchHits.name, ...statement })).rows[0];
        return { changed, value: hits };
      });
      return { query: text, results };
    },
    '/candles': async (ctx) => {
      const { market, source, seconds, from, to } = ctx.query;
      const { rows } = await plain.query(
        `select (floor(extract(epoch from start_ts) / $3) * $3 + $3)::bigint as end, ((array_agg(close order by start_ts desc) filter (where close is not null))[1])::text as close
           from market_candles where market_id = $1 and period = $2 and start_ts >= to_timestamp($4) and start_ts < to_timestamp($5)
          group by 1 order by 1`,
        [market, source, seconds, from, to],
      );
      return rows;
    },
    '/orderbook': async (ctx) =>
      (
        await plain.query(
          `select book_side, yes_price::text, sum(remaining)::text as count from orders
            where market_id = $1 and status in ('OPEN', 'PARTIAL') and (expiration_ts is null or expiration_ts > now())
            group by 1, 2`,
          [ctx.query.market],
        )
      ).rows,
    '/public-search': async (ctx) => {
      const text = String(ctx.query.q ?? '').trim();
      const limit = limitOf(ctx.query.limit_per_type, 10, 50);
      const found = await index.read(async (words, since) => {
        const query = words.query(text);
        const candidates = CANDIDATES_PER_RESULT * limit;
        const best = (kind: 'event' | 'tag' | 'profile') => listOf(withinFirst(words.best(query, kind, candidates, { widenBelow: limit }), limit));
        const lists = { events: best('event'), tags: best('tag'), profiles: best('profile') };
        const total = words.count(query, 'event', COUNT_CAP);
        if (Object.values(lists).every((list) => list.ids.length === 0)) return { changed: await changedSince(since), value: { events: [], tags: [], profiles: [], total } };
        const statement = publicSearchHits.positional({ ...bindingsOf(lists, limit), q_since: since });
        const { changed, ...rows } = (await publicSearch.query({ name: publicSearchHits.name, ...statement })).rows[0];
        return { changed, value: { ...rows, total } };
      });
      const { events, tags, profiles, total } = found;
      return { events, tags, profiles, pagination: { hasMore: total > events.length, totalResults: total } };
    },
  };

  const app = new Koa();
  app.use(async (ctx) => {
    const route = Object.hasOwn(routes, ctx.path) ? routes[ctx.path] : undefined;
    if (!route) ctx.throw(404);
    ctx.body = await route!(ctx);
  });
  return {
    app,
    close: async () => {
      await Promise.all([plain.end(), search.end(), publicSearch.end()]);
    },
  };
}

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
import { SEARCH_POOL_MAX } from '../src/db/pools.js';

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

/** `/events/pagination?limit=N`: the page of `/events` and the matching events counted up to the offset scan window (10,000). */
export const SQL_PAGINATION = `
  select c.total, p.*
    from (select count(*)::int as total from (select 1 from events e where e.status = 'ACTIVE' limit 10000) x) c
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

const MARKET_DOC = `(lower(m.title) || ' ' || lower(m.ticker))`;
const EVENT_DOC = `(lower(e.title) || ' ' || lower(e.ticker))`;
const SERIES_DOC = `(lower(s.title) || ' ' || lower(s.ticker))`;

/**
 * The candidates of the native search with their tier (0 exact, 1 prefix, 2 other), each kind from an
 * `<kind>_ids` CTE given by the caller.
 * Parameters: $1 text, $2 upper, $3 prefix pattern, $4 upper prefix pattern.
 */
const searchCandidates = (p: string) => `
  select 'market' as kind, 3 as kind_rank, m.id::text as id, m.ticker, m.title, e.title as subtitle, ${MARKET_DOC} as doc,
         case when m.ticker = $2 or lower(m.title) = $1 then 0 when m.ticker like $4 or lower(m.title) like $3 then 1 else 2 end as tier
    from markets m join events e on e.id = m.event_id where m.id in (select id from ${p}market_ids)
  union all
  select 'event', 2, e.id::text, e.ticker, e.title, s.title, ${EVENT_DOC},
         case when e.ticker = $2 or e.slug = $1 or lower(e.title) = $1 then 0 when e.ticker like $4 or e.slug like $3 or lower(e.title) like $3 then 1 else 2 end
    from events e join series s on s.id = e.series_id where e.id in (select id from ${p}event_ids)
  union all
  select 'series', 1, s.id::text, s.ticker, s.title, c.name || ' · ' || s.frequency, ${SERIES_DOC},
         case when s.ticker = $2 or s.slug = $1 or lower(s.title) = $1 then 0 when s.ticker like $4 or s.slug like $3 or lower(s.title) like $3 then 1 else 2 end
    from series s join categories c on c.id = s.category_id where s.id in (select id from ${p}series_ids)
  union all
  select 'tag', 4, t.id::text, t.slug, t.label, 'Tag', lower(t.label) || ' ' || t.slug,
         case when t.slug = $1 or lower(t.label) = $1 then 0 when t.slug like $3 or lower(t.label) like $3 then 1 else 2 end
    from tags t where t.id in (select id from ${p}tag_ids)
  union all
  select 'profile', 5, u.id::text, u.username, coalesce(nullif(u.name, ''), u.username), '@' || u.username, lower(u.username) || ' ' || lower(u.name),
         case when lower(u.username) = $1 or lower(u.name) = $1 then 0 when lower(u.username) like $3 or lower(u.name) like $3 then 1 else 2 end
    from users u where u.id in (select id from ${p}profile_ids) and u.username <> ''`;

/** Rank-2 candidates of one kind: the first $7 containing the text, then, only if fewer, the first $7 word-similar. */
const similarIds = (name: string, from: string, contains: string, similar: string) => {
  const alias = from.split(' ')[1]!;
  return `s_${name}_contains as (select ${alias}.id from ${from} where ${contains} limit $7),
  s_${name}_ids as (select id from s_${name}_contains
    union (select ${alias}.id from ${from} where (${similar}) and (select count(*) from s_${name}_contains) < $7 limit $7))`;
};

/**
 * `/api/search?q=...`: exact and prefix matches (each way of matching cut at the page size) ranked by tier,
 * kind, word similarity, similarity, id; then the other matches kind after kind (each kind's: the text
 * anywhere, `like '%text%'`, cut at twice the page size, and only if fewer, word-similar, `<%`, cut
 * likewise), ranked by word similarity, similarity, id; the first page-size rows. One statement for both
 * steps of the service (tiers 0-1 of the first step rank above every tier-2 row of the second; the UNION ALL
 * under the LIMIT stops reading at the part that fills it).
 * Parameters: $1 text, $2 upper, $3 prefix, $4 upper prefix, $5 contains, $6 page size, $7 twice the page size.
 * Run with enable_seqscan off (the service sets it for its trigram step; the prefix step reads btrees anyway).
 */
/** Rank-2 results are read kind after kind, in rank order. */
const SIMILAR_KINDS = ['series', 'event', 'market', 'tag', 'profile'];

export const SQL_SEARCH = `
  with p_market_ids as (
    (select id from markets where (ticker collate "C") like $4 order by (ticker collate "C"), id limit $6)
    union (select id from markets where (lower(title) collate "C") like $3 order by (lower(title) collate "C"), id limit $6)
  ),
  p_event_ids as (
    (select id from events where (ticker collate "C") like $4 order by (ticker collate "C"), id limit $6)
    union (select id from events where (lower(title) collate "C") like $3 order by (lower(title) collate "C"), id limit $6)
    union (select id from events where slug = $1)
  ),
  p_series_ids as (
    (select id from series where ticker = $2 or slug = $1)
    union (select id from series where (ticker collate "C") like $4 or (slug collate "C") like $3 or (lower(title) collate "C") like $3 order by id limit $6)
  ),
  p_tag_ids as (
    (select id from tags where slug = $1 or lower(label) = $1)
    union (select id from tags where (slug collate "C") like $3 or (lower(label) collate "C") like $3 order by id limit $6)
  ),
  p_profile_ids as (
    (select id from users where lower(username) = $1)
    union (select id from users where (lower(username) collate "C") like $3 order by (lower(username) collate "C") limit $6)
    union (select id from users where (lower(name) collate "C") like $3 order by (lower(name) collate "C"), id limit $6)
  ),
  ${similarIds('series', 'series s', `${SERIES_DOC} like $5`, `$1 <% ${SERIES_DOC}`)},
  ${similarIds('event', 'events e', `${EVENT_DOC} like $5`, `$1 <% ${EVENT_DOC}`)},
  ${similarIds('market', 'markets m', `${MARKET_DOC} like $5`, `$1 <% ${MARKET_DOC}`)},
  ${similarIds('tag', 'tags x', 'lower(x.label) like $5 or x.slug like $5', '$1 <% lower(x.label) or $1 <% x.slug')},
  ${similarIds('profile', 'users x', 'lower(x.username) like $5 or lower(x.name) like $5', '$1 <% lower(x.username) or $1 <% lower(x.name)')}
  select kind, id, ticker, title, subtitle from (
    (select * from (${searchCandidates('p_')}) c where tier <= 1
      order by tier, kind_rank, word_similarity($1, doc) desc, similarity($1, doc) desc, length(id), id limit $6)
${SIMILAR_KINDS.map((kind) => `
    union all
    (select * from (${searchCandidates('s_')}) c where tier = 2 and kind = '${kind}'
      order by word_similarity($1, doc) desc, similarity($1, doc) desc, length(id), id limit $6)`).join('')}
  ) r
  limit $6`;

const PS_EVENT_TEXT = `(lower(e.title) || ' ' || lower(e.ticker))`;
const PS_TITLE_C = `(lower(e.title) collate "C")`;
const PS_TICKER_C = `(e.ticker collate "C")`;

/**
 * `/public-search?q=...` (text of 3 or more characters, no filters): the events (exact, title and ticker
 * prefix matches, each cut at the page size, and up to 100 others: containing the text, or, when none does,
 * word-similar), their count up to 1,000, the tags and the profiles, each ranked as the service ranks them;
 * one statement. Parameters: $1 text, $2 contains pattern, $3 prefix pattern, $4 page size.
 * Run with max_parallel_workers_per_gather = 0, as every connection of the service (src/db/knex.ts).
 */
export const SQL_PUBLIC_SEARCH = `
  with contained as materialized (
    select e.id from events e where (${PS_EVENT_TEXT} like lower($2::text) or e.slug = lower($1::text))
  ),
  matches as materialized (
    select id, 2 as class from contained
    union all
    select e.id, 3 from events e where lower($1::text) <% ${PS_EVENT_TEXT} and not exists (select 1 from contained)
  ),
  candidates as (
    (select e.id, 0 as class from events e where (${PS_TITLE_C} = lower($1::text) or ${PS_TICKER_C} = upper(lower($1::text)) or e.slug = lower($1::text)) limit $4)
    union all (select e.id, 1 from events e where ${PS_TITLE_C} like lower($3::text) order by ${PS_TITLE_C}, e.id limit $4)
    union all (select e.id, 1 from events e where ${PS_TICKER_C} like upper(lower($3::text)) order by ${PS_TICKER_C}, e.id limit $4)
    union all (select id, class from matches limit 100)
  ),
  ranked_events as (
    select e.id::text as id, e.ticker, e.slug, e.title, e.status, s.title as series_title
      from (select id, min(class) as class from candidates group by id) c
      join events e on e.id = c.id
      join series s on s.id = e.series_id
     order by c.class, case when c.class = 3 then word_similarity(lower($1::text), ${PS_EVENT_TEXT}) end desc, ${PS_TITLE_C}, e.id
     limit $4
  ),
  matched_tags as (select t.* from tags t where lower(t.label) like lower($2::text) or t.slug like lower($2::text)),
  ranked_tags as (
    select t.id::text as id, t.slug, t.label
      from (select * from matched_tags
            union all
            select t.* from tags t where lower($1::text) <% lower(t.label) and not exists (select 1 from matched_tags)) t
     order by case when lower(t.label) = lower($1::text) or t.slug = lower($1::text) then 0
                   when lower(t.label) like lower($3::text) or t.slug like lower($3::text) then 1
                   when lower(t.label) like lower($2::text) or t.slug like lower($2::text) then 2 else 3 end,
              case when not (lower(t.label) like lower($2::text) or t.slug like lower($2::text)) then word_similarity(lower($1::text), lower(t.label)) end desc,
              lower(t.label) collate "C", t.id
     limit $4
  ),
  users_contained as materialized (
    select u.id from users u where u.username <> '' and (lower(u.username) like lower($2::text) or lower(u.name) like lower($2::text))
  ),
  user_matches as materialized (
    select id, 2 as class from users_contained
    union all
    select u.id, 3 from users u where u.username <> '' and (lower($1::text) <% lower(u.username) or lower($1::text) <% lower(u.name))
       and not exists (select 1 from users_contained)
  ),
  user_candidates as (
    (select u.id, 0 as class from users u where u.username <> '' and ((lower(u.username) collate "C") = lower($1::text) or (lower(u.name) collate "C") = lower($1::text)) limit $4)
    union all (select u.id, 1 from users u where u.username <> '' and (lower(u.username) collate "C") like lower($3::text) order by (lower(u.username) collate "C") limit $4)
    union all (select u.id, 1 from users u where u.username <> '' and (lower(u.name) collate "C") like lower($3::text) order by (lower(u.name) collate "C"), u.id limit $4)
    union all (select id, class from user_matches limit 100)
  ),
  ranked_profiles as (
    select u.id::text as id, u.name, u.username
      from (select id, min(class) as class from user_candidates group by id) c join users u on u.id = c.id
     order by c.class,
              case when c.class = 3 then greatest(word_similarity(lower($1::text), lower(u.username)), word_similarity(lower($1::text), lower(u.name))) end desc,
              (lower(u.username) collate "C"), u.id
     limit $4
  )
  select (select count(*)::int from (select 1 from matches limit 1000) m) as total,
         coalesce((select json_agg(r) from ranked_events r), '[]'::json) as events,
         coalesce((select json_agg(r) from ranked_tags r), '[]'::json) as tags,
         coalesce((select json_agg(r) from ranked_profiles r), '[]'::json) as profiles`;

const escapeLike = (text: string) => text.replace(/[\\%_]/g, '\\$&');

export interface Baseline {
  app: Koa;
  close(): Promise<void>;
}

/** The baseline app: one route per measured request; answers 404 to anything else. */
export function createBaseline(databaseUrl: string): Baseline {
  // The session settings of every service connection (src/db/knex.ts), and the native search's sequential
  // scans off (src/db/pools.ts); not its generic plans: the baseline's statement is planned for its values.
  const serviceSettings = '-c max_parallel_workers_per_gather=0';
  const plain = new pg.Pool({ connectionString: databaseUrl, max: POOL_MAX, options: serviceSettings });
  const search = new pg.Pool({ connectionString: databaseUrl, max: POOL_MAX, options: `${serviceSettings} -c enable_seqscan=off` });
  // As many connections as the service's searches get; not their generic plans: this statement, written by hand
  // with LIKE patterns, is planned for its values.
  const publicSearch = new pg.Pool({ connectionString: databaseUrl, max: SEARCH_POOL_MAX, options: serviceSettings });
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
      const text = String(ctx.query.q ?? '').trim().toLowerCase();
      const limit = limitOf(ctx.query.limit, 12, 50);
      const upper = text.toUpperCase();
      const params = [text, upper, `${escapeLike(text)}%`, `${escapeLike(upper)}%`, `%${escapeLike(text)}%`, limit, 2 * limit];
      return { query: text, results: (await search.query(SQL_SEARCH, params)).rows };
    },
    '/public-search': async (ctx) => {
      const text = String(ctx.query.q ?? '').trim();
      if (Array.from(text).length < 3) ctx.throw(400, 'the baseline handles text of 3 characters or more');
      const limit = limitOf(ctx.query.limit_per_type, 10, 50);
      const { rows } = await publicSearch.query(SQL_PUBLIC_SEARCH, [text, `%${escapeLike(text)}%`, `${escapeLike(text)}%`, limit]);
      const { total, events, tags, profiles } = rows[0];
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

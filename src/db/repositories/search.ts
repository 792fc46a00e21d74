import type { Knex } from 'knex';
import type { Db, Queryable } from '../knex.js';

/**
 * The native search (`/api/search`) over markets, events, series, tags and trader profiles, in two steps
 * whose every candidate query is cut at `perQuery` rows, so that the cost stays bounded however many items
 * match:
 * - `searchByPrefix`: exact and prefix matches of tickers, slugs, usernames and titles, read in index order
 *   from the byte-order (`collate "C"`) btrees (migrations 0003 and 0004), whatever the database's collation.
 * - `searchBySimilarity`: the rest, text occurring anywhere (`like '%text%'`) or similar (`<%`, word
 *   similarity), through the trigram GIN indexes; sequential scans are disabled for that statement, since
 *   the planner's fixed estimate for `<%` would otherwise pick a scan that reads every row when nothing matches.
 * Within a step, rows are ranked by rank (0 exact, 1 prefix, 2 the rest), kind, word similarity,
 * whole-text similarity, then id.
 */

/** The search text in the forms the queries bind (built by the domain; bound, never interpolated). */
export interface SearchTerms {
  /** Lower-cased text. */
  text: string;
  /** Upper-cased text: tickers are stored upper-case. */
  upper: string;
  /** LIKE patterns, metacharacters escaped: `text%`, `TEXT%`. */
  prefix: string;
  upperPrefix: string;
  /** `%text%`, or undefined when the text is too short for a trigram index to serve it. */
  contains: string | undefined;
}

export type SearchKind = 'market' | 'event' | 'series' | 'tag' | 'profile';

export interface SearchRow {
  kind: SearchKind;
  id: string;
  ticker: string;
  title: string;
  subtitle: string;
}

const MARKET_DOC = `(lower(m.title) || ' ' || lower(m.ticker))`;
const EVENT_DOC = `(lower(e.title) || ' ' || lower(e.ticker))`;
const SERIES_DOC = `(lower(s.title) || ' ' || lower(s.ticker))`;

/**
 * The candidates of every kind with their rank, as one `select` to wrap: each `*_ids` CTE is given by the
 * step. Ranks: 0 the ticker, slug or username (or the whole title) equals the text; 1 one of them starts
 * with it; 2 otherwise.
 */
const CANDIDATES = `
  select 'market' as kind, 3 as kind_rank, m.id::text as id, m.ticker, m.title, e.title as subtitle, ${MARKET_DOC} as doc,
         case when m.ticker = :q_upper or lower(m.title) = :q_text then 0
              when m.ticker like :q_upper_prefix or lower(m.title) like :q_prefix then 1 else 2 end as tier
    from markets m join events e on e.id = m.event_id
   where m.id in (select id from market_ids)
  union all
  select 'event', 2, e.id::text, e.ticker, e.title, s.title, ${EVENT_DOC},
         case when e.ticker = :q_upper or e.slug = :q_text or lower(e.title) = :q_text then 0
              when e.ticker like :q_upper_prefix or e.slug like :q_prefix or lower(e.title) like :q_prefix then 1 else 2 end
    from events e join series s on s.id = e.series_id
   where e.id in (select id from event_ids)
  union all
  select 'series', 1, s.id::text, s.ticker, s.title, c.name || ' · ' || s.frequency, ${SERIES_DOC},
         case when s.ticker = :q_upper or s.slug = :q_text or lower(s.title) = :q_text then 0
              when s.ticker like :q_upper_prefix or s.slug like :q_prefix or lower(s.title) like :q_prefix then 1 else 2 end
    from series s join categories c on c.id = s.category_id
   where s.id in (select id from series_ids)
  union all
  select 'tag', 4, t.id::text, t.slug, t.label, 'Tag', lower(t.label) || ' ' || t.slug,
         case when t.slug = :q_text or lower(t.label) = :q_text then 0
              when t.slug like :q_prefix or lower(t.label) like :q_prefix then 1 else 2 end
    from tags t
   where t.id in (select id from tag_ids)
  union all
  select 'profile', 5, u.id::text, u.username, coalesce(nullif(u.name, ''), u.username), '@' || u.username, lower(u.username) || ' ' || lower(u.name),
         case when lower(u.username) = :q_text or lower(u.name) = :q_text then 0
              when lower(u.username) like :q_prefix or lower(u.name) like :q_prefix then 1 else 2 end
    from users u
   where u.id in (select id from profile_ids) and u.username <> ''`;

const RANKED = `
  select kind, id, ticker, title, subtitle from (${CANDIDATES}) c
   where tier between :q_min_tier and :q_max_tier
   order by tier, kind_rank, word_similarity(:q_text, doc) desc, similarity(:q_text, doc) desc, length(id), id
   limit :q_limit`;

function bindings(terms: SearchTerms, limit: number, perQuery: number, tiers: [number, number]): Record<string, string | number> {
  const out: Record<string, string | number> = {
    q_text: terms.text,
    q_upper: terms.upper,
    q_prefix: terms.prefix,
    q_upper_prefix: terms.upperPrefix,
    q_k: perQuery,
    q_limit: limit,
    q_min_tier: tiers[0],
    q_max_tier: tiers[1],
  };
  if (terms.contains !== undefined) out.q_contains = terms.contains;
  return out;
}

/** Exact and prefix matches (ranks 0 and 1), best first, at most `limit`; each way of matching yields at most `perQuery` candidates. */
export async function searchByPrefix(db: Queryable, terms: SearchTerms, limit: number, perQuery: number): Promise<SearchRow[]> {
  const byTicker = (table: string) =>
    `(select id from ${table} where (ticker collate "C") like :q_upper_prefix order by (ticker collate "C"), id limit :q_k)`;
  const byTitle = (table: string) =>
    `(select id from ${table} where (lower(title) collate "C") like :q_prefix order by (lower(title) collate "C"), id limit :q_k)`;
  const sql = `
    with market_ids as (${byTicker('markets')} union ${byTitle('markets')}),
    event_ids as (${byTicker('events')} union ${byTitle('events')} union (select id from events where slug = :q_text)),
    series_ids as (
      (select id from series where ticker = :q_upper or slug = :q_text)
      union (select id from series where (ticker collate "C") like :q_upper_prefix or (slug collate "C") like :q_prefix
                                      or (lower(title) collate "C") like :q_prefix order by id limit :q_k)
    ),
    tag_ids as (
      (select id from tags where slug = :q_text or lower(label) = :q_text)
      union (select id from tags where (slug collate "C") like :q_prefix or (lower(label) collate "C") like :q_prefix order by id limit :q_k)
    ),
    profile_ids as (
      (select id from users where lower(username) = :q_text)
      union (select id from users where (lower(username) collate "C") like :q_prefix order by (lower(username) collate "C") limit :q_k)
      union (select id from users where (lower(name) collate "C") like :q_prefix order by (lower(name) collate "C"), id limit :q_k)
    )
    ${RANKED}`;
  const result = await db.raw(sql, bindings(terms, limit, perQuery, [0, 1]));
  return result.rows as SearchRow[];
}

/**
 * The remaining matches (rank 2: the text occurs anywhere, or the item is similar to it), best first, at most
 * `limit`; each way of matching yields at most `perQuery` candidates, exact and prefix matches among them
 * left out (they are `searchByPrefix`'s).
 */
export async function searchBySimilarity(db: Db, terms: SearchTerms, limit: number, perQuery: number): Promise<SearchRow[]> {
  const contains = (sql: string) => (terms.contains !== undefined ? `(${sql} limit :q_k) union ` : '');
  const sql = `
    with market_ids as (
      ${contains(`select m.id from markets m where ${MARKET_DOC} like :q_contains`)}
      (select m.id from markets m where :q_text <% ${MARKET_DOC} limit :q_k)
    ),
    event_ids as (
      ${contains(`select e.id from events e where ${EVENT_DOC} like :q_contains`)}
      (select e.id from events e where :q_text <% ${EVENT_DOC} limit :q_k)
    ),
    series_ids as (
      ${contains(`select s.id from series s where ${SERIES_DOC} like :q_contains`)}
      (select s.id from series s where :q_text <% ${SERIES_DOC} limit :q_k)
    ),
    tag_ids as (
      ${contains(`select id from tags where lower(label) like :q_contains or slug like :q_contains`)}
      (select id from tags where :q_text <% lower(label) or :q_text <% slug limit :q_k)
    ),
    profile_ids as (
      ${contains(`select id from users where lower(username) like :q_contains or lower(name) like :q_contains`)}
      (select id from users where :q_text <% lower(username) or :q_text <% lower(name) limit :q_k)
    )
    ${RANKED}`;
  const run = async (tx: Knex.Transaction) => {
    await tx.raw('set local enable_seqscan = off');
    return tx.raw(sql, bindings(terms, limit, perQuery, [2, 2]));
  };
  const result = await db.transaction(run);
  return result.rows as SearchRow[];
}

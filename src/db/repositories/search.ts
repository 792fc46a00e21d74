import type { Db } from '../knex.js';

/**
 * The native search (`/api/search`) over markets, events, series, tags and trader profiles, in two steps
 * whose every candidate query is cut at `perQuery` rows, so that the cost stays bounded however many items
 * match:
 * - `searchByPrefix`: exact and prefix matches of tickers, slugs, usernames and titles, read in index order
 *   from the byte-order (`collate "C"`) btrees (migrations 0003 and 0004), whatever the database's collation.
 * - `searchBySimilarity`: the rest, text occurring anywhere (`like '%text%'`) or similar (`<%`, word
 *   similarity), through the trigram GIN indexes.
 * Both run on the native search's connections (src/db/pools.ts): every statement is named and planned once per
 * connection without its values (each way of matching is an index range, lookup or trigram scan whatever the
 * text, and planning these statements costs more than running them), with sequential scans off (the planner's
 * fixed estimate for `<%` would otherwise pick a scan that reads every row when nothing matches).
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
  /** The least strings above every string starting with `text`, `TEXT` (code point order): prefix range ends. */
  prefixEnd: string;
  upperPrefixEnd: string;
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
 * The candidates of each kind with their rank, as one `select` to wrap: each `<kind>_ids` CTE is given by
 * the step. Ranks: 0 the ticker, slug or username (or the whole title) equals the text; 1 one of them
 * starts with it; 2 otherwise.
 */
const CANDIDATE_OF: Record<SearchKind, string> = {
  market: `
  select 'market' as kind, 3 as kind_rank, m.id::text as id, m.ticker, m.title, e.title as subtitle, ${MARKET_DOC} as doc,
         case when m.ticker = :q_upper or lower(m.title) = :q_text then 0
              when m.ticker like :q_upper_prefix or lower(m.title) like :q_prefix then 1 else 2 end as tier
    from markets m join events e on e.id = m.event_id
   where m.id in (select id from market_ids)`,
  event: `
  select 'event' as kind, 2 as kind_rank, e.id::text as id, e.ticker, e.title, s.title as subtitle, ${EVENT_DOC} as doc,
         case when e.ticker = :q_upper or e.slug = :q_text or lower(e.title) = :q_text then 0
              when e.ticker like :q_upper_prefix or e.slug like :q_prefix or lower(e.title) like :q_prefix then 1 else 2 end as tier
    from events e join series s on s.id = e.series_id
   where e.id in (select id from event_ids)`,
  series: `
  select 'series' as kind, 1 as kind_rank, s.id::text as id, s.ticker, s.title, c.name || ' · ' || s.frequency as subtitle, ${SERIES_DOC} as doc,
         case when s.ticker = :q_upper or s.slug = :q_text or lower(s.title) = :q_text then 0
              when s.ticker like :q_upper_prefix or s.slug like :q_prefix or lower(s.title) like :q_prefix then 1 else 2 end as tier
    from series s join categories c on c.id = s.category_id
   where s.id in (select id from series_ids)`,
  tag: `
  select 'tag' as kind, 4 as kind_rank, t.id::text as id, t.slug as ticker, t.label as title, 'Tag' as subtitle, lower(t.label) || ' ' || t.slug as doc,
         case when t.slug = :q_text or lower(t.label) = :q_text then 0
              when t.slug like :q_prefix or lower(t.label) like :q_prefix then 1 else 2 end as tier
    from tags t
   where t.id in (select id from tag_ids)`,
  profile: `
  select 'profile' as kind, 5 as kind_rank, u.id::text as id, u.username as ticker, coalesce(nullif(u.name, ''), u.username) as title,
         '@' || u.username as subtitle, lower(u.username) || ' ' || lower(u.name) as doc,
         case when lower(u.username) = :q_text or lower(u.name) = :q_text then 0
              when lower(u.username) like :q_prefix or lower(u.name) like :q_prefix then 1 else 2 end as tier
    from users u
   where u.id in (select id from profile_ids) and u.username <> ''`,
};

const CANDIDATES = Object.values(CANDIDATE_OF).join('\n  union all');

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
    q_prefix_end: terms.prefixEnd,
    q_upper_prefix_end: terms.upperPrefixEnd,
    q_k: perQuery,
    q_limit: limit,
    q_min_tier: tiers[0],
    q_max_tier: tiers[1],
  };
  if (terms.contains !== undefined) out.q_contains = terms.contains;
  return out;
}

/** `column` (collate "C") starts with the text: a range of the btree (so that a generic plan reads it too), then the exact test. */
const startsWith = (column: string, upper = false) => {
  const [from, end, like] = upper ? [':q_upper', ':q_upper_prefix_end', ':q_upper_prefix'] : [':q_text', ':q_prefix_end', ':q_prefix'];
  return `(${column} collate "C") >= ${from} and (${column} collate "C") < ${end} and (${column} collate "C") like ${like}`;
};

/**
 * Exact and prefix matches (ranks 0 and 1), best first, at most `limit`; each way of matching yields at
 * most `perQuery` candidates.
 */
export async function searchByPrefix(db: Db, terms: SearchTerms, limit: number, perQuery: number): Promise<SearchRow[]> {
  const byTicker = (table: string) => `(select id from ${table} where ${startsWith('ticker', true)} order by (ticker collate "C"), id limit :q_k)`;
  const byTitle = (table: string) => `(select id from ${table} where ${startsWith('lower(title)')} order by (lower(title) collate "C"), id limit :q_k)`;
  const sql = `
    with market_ids as (${byTicker('markets')} union ${byTitle('markets')}),
    event_ids as (${byTicker('events')} union ${byTitle('events')} union (select id from events where slug = :q_text)),
    series_ids as (
      (select id from series where ticker = :q_upper or slug = :q_text)
      union (select id from series where (${startsWith('ticker', true)}) or (${startsWith('slug')}) or (${startsWith('lower(title)')}) order by id limit :q_k)
    ),
    tag_ids as (
      (select id from tags where slug = :q_text or lower(label) = :q_text)
      union (select id from tags where (${startsWith('slug')}) or (${startsWith('lower(label)')}) order by id limit :q_k)
    ),
    profile_ids as (
      (select id from users where lower(username) = :q_text)
      union (select id from users where ${startsWith('lower(username)')} order by (lower(username) collate "C") limit :q_k)
      union (select id from users where ${startsWith('lower(name)')} order by (lower(name) collate "C"), id limit :q_k)
    )
    ${RANKED}`;
  const result = await db.raw(sql, bindings(terms, limit, perQuery, [0, 1])).options({ name: 'dots_search_prefix' });
  return result.rows as SearchRow[];
}

/**
 * Rank-2 matching of each kind, in kind rank order: the text occurs anywhere (`like :q_contains`, through
 * the trigram index), or the item is word-similar to it (`<%`).
 */
const SIMILARITY_KINDS: ReadonlyArray<{ kind: SearchKind; from: string; contains: string; similar: string }> = [
  { kind: 'series', from: 'series s', contains: `${SERIES_DOC} like :q_contains`, similar: `:q_text <% ${SERIES_DOC}` },
  { kind: 'event', from: 'events e', contains: `${EVENT_DOC} like :q_contains`, similar: `:q_text <% ${EVENT_DOC}` },
  { kind: 'market', from: 'markets m', contains: `${MARKET_DOC} like :q_contains`, similar: `:q_text <% ${MARKET_DOC}` },
  { kind: 'tag', from: 'tags x', contains: 'lower(x.label) like :q_contains or x.slug like :q_contains', similar: ':q_text <% lower(x.label) or :q_text <% x.slug' },
  {
    kind: 'profile',
    from: 'users x',
    contains: 'lower(x.username) like :q_contains or lower(x.name) like :q_contains',
    similar: ':q_text <% lower(x.username) or :q_text <% lower(x.name)',
  },
];

/**
 * The remaining matches (rank 2: the text occurs anywhere, or the item is similar to it), best first, at most
 * `limit`; each way of matching yields at most `perQuery` candidates, exact and prefix matches among them
 * left out (they are `searchByPrefix`'s).
 *
 * Rank 2 is ordered by kind first, so the kinds are read one after another, a statement each, until
 * `limit` is reached (the later kinds are never read, nor planned: planning a trigram query costs more
 * than running it). A kind's similar-only candidates are read only when fewer than `perQuery` of its
 * items contain the text: those rank above them in all but rare cases, and `perQuery` is at least `limit`.
 */
export async function searchBySimilarity(db: Db, terms: SearchTerms, limit: number, perQuery: number): Promise<SearchRow[]> {
  const rows: SearchRow[] = [];
  for (const { kind, from, contains, similar } of SIMILARITY_KINDS) {
    const alias = from.split(' ')[1]!;
    const similarIds = `select ${alias}.id from ${from} where (${similar})`;
    const ids =
      terms.contains === undefined
        ? `${kind}_ids as (${similarIds} limit :q_k)`
        : `${kind}_contains as (select ${alias}.id from ${from} where ${contains} limit :q_k),
           ${kind}_ids as (select id from ${kind}_contains
                           union (${similarIds} and (select count(*) from ${kind}_contains) < :q_k limit :q_k))`;
    const sql = `with ${ids}
      select kind, id, ticker, title, subtitle from (${CANDIDATE_OF[kind]}) c
       where tier = 2
       order by word_similarity(:q_text, doc) desc, similarity(:q_text, doc) desc, length(id), id
       limit :q_limit`;
    const name = `dots_search_similar_${kind}${terms.contains === undefined ? '' : '_contains'}`;
    const result = await db.raw(sql, bindings(terms, limit - rows.length, perQuery, [2, 2])).options({ name });
    rows.push(...(result.rows as SearchRow[]));
    if (rows.length >= limit) break;
  }
  return rows;
}

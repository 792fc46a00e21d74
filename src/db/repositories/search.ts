import type { Db } from '../knex.js';
import { CANDIDATES_PER_RESULT, candidateCtes, EVENTS, MARKETS, PROFILES, QUERY_CTES, SERIES, TAGS, type SearchKind as Kind } from './word-search.js';

/**
 * The native search (`/api/search`): one ranked list across series, events, markets, tags and trader
 * profiles, matched and ranked word by word (word-search.ts), each kind cut at the page size before the
 * kinds are merged; one statement.
 *
 * It runs on the native search's connections (src/db/pools.ts) as a named statement, planned once per
 * connection without its values (each step is a lookup of an index whatever the text, and planning it costs
 * more than running it), with sequential scans off (a generic plan made while the catalogue was small would
 * otherwise keep scanning every row as it grows).
 */

export type SearchKind = 'market' | 'event' | 'series' | 'tag' | 'profile';

export interface SearchRow {
  kind: SearchKind;
  id: string;
  ticker: string;
  title: string;
  subtitle: string;
}

/** Each kind in kind order (the last tie-breaker), with its columns: ticker, title, subtitle. */
const KINDS: ReadonlyArray<{ name: SearchKind; kind: Kind; columns: string }> = [
  {
    name: 'series',
    kind: SERIES,
    columns: `s.ticker, s.title, (select c.name from categories c where c.id = s.category_id) || ' · ' || s.frequency as subtitle`,
  },
  { name: 'event', kind: EVENTS, columns: `e.ticker, e.title, (select x.title from series x where x.id = e.series_id) as subtitle` },
  { name: 'market', kind: MARKETS, columns: `m.ticker, m.title, (select x.title from events x where x.id = m.event_id) as subtitle` },
  { name: 'tag', kind: TAGS, columns: `t.slug as ticker, t.label as title, 'Tag' as subtitle` },
  { name: 'profile', kind: PROFILES, columns: `u.username as ticker, coalesce(nullif(u.name, ''), u.username) as title, '@' || u.username as subtitle` },
];

export const SEARCH_SQL = `
  with ${QUERY_CTES},
  ${candidateCtes(KINDS, true).join(',\n  ')}
  select kind, id_text as id, ticker, title, subtitle from (
    ${KINDS.map(({ name, kind }, i) => `select '${name}' as kind, ${i} as kind_rank, id::text as id_text, ticker, title, subtitle, tier, words, active, volume from ${kind.name}_ranked`).join('\n    union all ')}
  ) r
  order by tier, words, active desc, volume desc, kind_rank, length(id_text), id_text
  limit :q_limit`;

/** The best `limit` items matching `text` (as typed: trimmed, cut; the statement splits it into words). */
export async function search(db: Db, text: string, limit: number): Promise<SearchRow[]> {
  const result = await db.raw(SEARCH_SQL, { q_text: text, q_limit: limit, q_candidates: CANDIDATES_PER_RESULT * limit }).options({ name: 'dots_search_words' });
  return result.rows as SearchRow[];
}

import { NamedStatement, type Queryable } from '../knex.js';
import type { SearchKind } from '../tables.js';
import { CHANGED_SINCE } from './search-index.js';

/**
 * The native search's read (`/api/search`): the candidates the word index chose (src/domain/catalogue/
 * search-index.ts), each with its rank and its number of words, read by id and ordered as one list: rank,
 * fewer words, active first, higher volume, then kind (series, event, market, tag, profile) and id. Status
 * and volume are read here, as they are now; and, in the same statement, whether the catalogue changed since
 * the index was read.
 *
 * One named statement, planned once per connection without its values (each candidate is a lookup of its
 * primary key).
 */

export interface SearchHitRecord {
  kind: SearchKind;
  id: string;
  ticker: string;
  title: string;
  subtitle: string;
}

/** Candidates of one kind, in three lists of the same length. */
export interface KindCandidates {
  ids: string[];
  tiers: number[];
  words: number[];
}

/** Each kind in kind order (the last tie-breaker): its table, id type, and columns ticker, title, subtitle. */
const KINDS: ReadonlyArray<{ kind: SearchKind; table: string; idType: string; active: string; volume: string; columns: string; where?: string }> = [
  {
    kind: 'series',
    table: 'series s',
    idType: 'bigint',
    active: 'true',
    volume: '0',
    columns: `s.ticker, s.title, (select c.name from categories c where c.id = s.category_id) || ' · ' || s.frequency as subtitle`,
  },
  {
    kind: 'event',
    table: 'events s',
    idType: 'bigint',
    active: `s.status = 'ACTIVE'`,
    volume: 's.volume',
    columns: `s.ticker, s.title, (select x.title from series x where x.id = s.series_id) as subtitle`,
  },
  {
    kind: 'market',
    table: 'markets s',
    idType: 'bigint',
    active: `s.status = 'ACTIVE'`,
    volume: 's.volume',
    columns: `s.ticker, s.title, (select x.title from events x where x.id = s.event_id) as subtitle`,
  },
  { kind: 'tag', table: 'tags s', idType: 'bigint', active: 'true', volume: '0', columns: `s.slug as ticker, s.label as title, 'Tag' as subtitle` },
  {
    kind: 'profile',
    table: 'users s',
    idType: 'uuid',
    active: 'true',
    volume: '0',
    columns: `s.username as ticker, coalesce(nullif(s.name, ''), s.username) as title, '@' || s.username as subtitle`,
    where: ` where s.username <> ''`,
  },
];

export const SEARCH_SQL = `
  select ${CHANGED_SINCE} as changed,
         coalesce((select json_agg(json_build_object('kind', kind, 'id', id, 'ticker', ticker, 'title', title, 'subtitle', subtitle) order by n) from (
  select r.*, row_number() over (order by tier, words, active desc, volume desc, kind_rank, length(id), id) as n from (
    ${KINDS.map(
      ({ kind, table, idType, active, volume, columns, where }, i) => `
    select '${kind}' as kind, ${i} as kind_rank, s.id::text as id, c.tier, c.words, ${active} as active, ${volume}::numeric as volume, ${columns}
      from unnest(:${kind}_ids::${idType}[], :${kind}_tiers::int[], :${kind}_words::int[]) c (id, tier, words)
      cross join lateral (select * from ${table} where s.id = c.id offset 0) s${where ?? ''}`,
    ).join('\n    union all')}
  ) r
  order by n
  limit :limit) h), '[]') as hits`;

const SEARCH_HITS = new NamedStatement<{ changed: boolean; hits: SearchHitRecord[] }>('dots_search_hits', SEARCH_SQL);

/**
 * The first `limit` of the candidates, in order, and whether anything changed since the snapshot `since` (the
 * one the word index that chose them was read at: src/domain/catalogue/live-search-index.ts).
 */
export async function readSearchHits(db: Queryable, candidates: Record<SearchKind, KindCandidates>, limit: number, since: string): Promise<{ changed: boolean; hits: SearchHitRecord[] }> {
  const bindings: Record<string, unknown> = { limit, q_since: since };
  for (const { kind } of KINDS) {
    bindings[`${kind}_ids`] = candidates[kind].ids;
    bindings[`${kind}_tiers`] = candidates[kind].tiers;
    bindings[`${kind}_words`] = candidates[kind].words;
  }
  return (await SEARCH_HITS.run(db, bindings)).rows[0]!;
}

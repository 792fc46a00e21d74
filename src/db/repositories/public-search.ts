import { NamedStatement, type Queryable } from '../knex.js';
import type { EventsRow, TagsRow, UsersRow } from '../tables.js';
import type { KindCandidates } from './search.js';
import { CHANGED_SINCE } from './search-index.js';

/**
 * Reads of `/public-search`: the candidates the word index chose for each bucket (src/domain/catalogue/
 * search-index.ts), each with its rank and number of words, read by id and ordered: rank, fewer words, active
 * first, higher volume (events), then id; at most `limit` of each. One named statement, planned once per
 * connection without its values (each candidate is a lookup of its primary key).
 */

export type SearchEventRecord = Pick<EventsRow, 'id' | 'ticker' | 'slug' | 'title' | 'status'> & { series_title: string };
export type SearchTagRecord = Pick<TagsRow, 'id' | 'slug' | 'label'>;
export type SearchProfileRecord = Pick<UsersRow, 'id' | 'name' | 'username'>;

export interface PublicSearchCandidates {
  events: KindCandidates;
  tags: KindCandidates;
  profiles: KindCandidates;
}

export interface PublicSearchRecords {
  events: SearchEventRecord[];
  tags: SearchTagRecord[];
  profiles: SearchProfileRecord[];
}

/** One bucket: its candidates' rows (`x`) with `c.tier` and `c.words`, in order, as a JSON array. */
const bucket = (name: string, table: string, idType: string, fields: string, order: string) => `
  (select coalesce(json_agg(json_build_object(${fields}) order by n), '[]')
     from (select x.*, row_number() over (order by c.tier, c.words, ${order}) as n
             from unnest(:${name}_ids::${idType}[], :${name}_tiers::int[], :${name}_words::int[]) c (id, tier, words)
             cross join lateral (select * from ${table} x where x.id = c.id offset 0) x
            order by n
            limit :limit) x) as ${name}`;

export const PUBLIC_SEARCH_SQL = `select
  ${CHANGED_SINCE} as changed,
  ${bucket(
    'events',
    'events',
    'bigint',
    `'id', x.id::text, 'ticker', x.ticker, 'slug', x.slug, 'title', x.title, 'status', x.status, 'series_title', (select s.title from series s where s.id = x.series_id)`,
    `(x.status = 'ACTIVE') desc, x.volume desc, x.id`,
  )},
  ${bucket('tags', 'tags', 'bigint', `'id', x.id::text, 'slug', x.slug, 'label', x.label`, 'x.id')},
  ${bucket('profiles', 'users', 'uuid', `'id', x.id::text, 'name', x.name, 'username', x.username`, 'x.id')}`;

const PUBLIC_SEARCH_HITS = new NamedStatement<PublicSearchRecords & { changed: boolean }>('dots_public_search_hits', PUBLIC_SEARCH_SQL);

/**
 * The best `limit` of each bucket's candidates, in order, and whether anything changed since the snapshot
 * `since` (the one the word index that chose them was read at).
 */
export async function readPublicSearchHits(db: Queryable, candidates: PublicSearchCandidates, limit: number, since: string): Promise<PublicSearchRecords & { changed: boolean }> {
  const bindings: Record<string, unknown> = { limit, q_since: since };
  for (const [name, list] of Object.entries(candidates as Record<keyof PublicSearchCandidates, KindCandidates>)) {
    bindings[`${name}_ids`] = list.ids;
    bindings[`${name}_tiers`] = list.tiers;
    bindings[`${name}_words`] = list.words;
  }
  // One row, always (a select without FROM).
  return (await PUBLIC_SEARCH_HITS.run(db, bindings)).rows[0]!;
}

/** Which tags each reference names: by id (digits), slug, or label (compared case-insensitively). */
export async function findTagsByReference(db: Queryable, references: string[]): Promise<Array<{ reference: string; id: string }>> {
  if (references.length === 0) return [];
  const result = await db.raw<{ rows: Array<{ reference: string; id: string }> }>(
    `select r.reference, t.id::text as id
       from unnest(array[${references.map(() => '?').join(', ')}]::text[]) as r(reference)
       join tags t on t.slug = r.reference or lower(t.label) = lower(r.reference)
         or t.id = (case when r.reference ~ '^[0-9]{1,18}$' then r.reference::bigint end)`,
    references,
  );
  return result.rows;
}

import type { Queryable } from '../knex.js';
import type { TagsRow } from '../tables.js';
import type { TagRecord } from './catalogue.js';

/**
 * Reads of the native tags (`/api/tags/{slug}`), from `tag_market_pairs` (migration 0003): the markets
 * shared by each pair of tags, kept by triggers; a tag paired with itself counts the markets carrying it.
 */

export type RelatedTagRecord = Pick<TagsRow, 'id' | 'slug' | 'label'> & { market_count: number; shared_markets: number };

/** The tag with this slug and the number of markets carrying it. */
export async function findTagBySlug(db: Queryable, slug: string): Promise<TagRecord | undefined> {
  return db('tags as t')
    .leftJoin('tag_market_pairs as p', (on) => on.on('p.tag_id', 't.id').andOn('p.other_tag_id', 't.id'))
    .where('t.slug', slug)
    .select('t.*', db.raw('coalesce(p.markets, 0) as market_count'))
    .first<TagRecord | undefined>();
}

/** The tags sharing markets with `tagId`, most shared markets first (ties by id), at most `cap`. */
export async function listRelatedTags(db: Queryable, tagId: string, cap: number): Promise<RelatedTagRecord[]> {
  return db('tag_market_pairs as p')
    .join('tags as t', 't.id', 'p.other_tag_id')
    .leftJoin('tag_market_pairs as d', (on) => on.on('d.tag_id', 'p.other_tag_id').andOn('d.other_tag_id', 'p.other_tag_id'))
    .where('p.tag_id', tagId)
    .whereRaw('p.other_tag_id <> p.tag_id')
    .where('p.markets', '>', 0)
    .select(db.raw('t.id::text as id'), 't.slug', 't.label', 'p.markets as shared_markets', db.raw('coalesce(d.markets, 0) as market_count'))
    .orderBy('p.markets', 'desc')
    .orderBy('p.other_tag_id', 'asc')
    .limit(cap);
}

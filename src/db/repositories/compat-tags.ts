import type { Queryable } from '../knex.js';
import type { TagsRow } from '../tables.js';

/** Reads of the compatibility tag endpoints (`/tags/{id}`, `/tags/slug/{slug}`). */

/** A tag with the number of ACTIVE events carrying it. */
export interface CompatTagRecord extends TagsRow {
  active_events_count: number;
}

/** One tag by exactly one of id or slug. */
export async function findCompatTag(db: Queryable, where: { id: string } | { slug: string }): Promise<CompatTagRecord | undefined> {
  const q = db('tags as t').select(
    't.*',
    // Kept by triggers (migration 0005): counting the events here would read thousands of rows per tag.
    db.raw('coalesce((select c.active_events from tag_active_event_counts c where c.tag_id = t.id), 0) as active_events_count'),
  );
  if ('id' in where) q.where('t.id', where.id);
  else q.where('t.slug', where.slug);
  return q.first<CompatTagRecord | undefined>();
}

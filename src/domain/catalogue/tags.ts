import type { Db } from '../../db/knex.js';
import * as tags from '../../db/repositories/tags.js';
import { notFound } from '../errors.js';
import { slugKey } from './names.js';
import type { CatalogueTag, RelatedTag } from './read-models.js';

/** At most this many related tags are returned. */
export const RELATED_TAGS_CAP = 20;

/** Native tags: a tag and the tags co-occurring with it on markets. */
export class CatalogueTagService {
  constructor(private readonly db: Db) {}

  async get(slug: string): Promise<{ tag: CatalogueTag; related: RelatedTag[] }> {
    const key = slugKey(slug);
    const tag = key === undefined ? undefined : await tags.findTagBySlug(this.db, key);
    if (!tag) throw notFound(`no tag '${slug}'`);
    return { tag, related: await tags.listRelatedTags(this.db, String(tag.id), RELATED_TAGS_CAP) };
  }
}

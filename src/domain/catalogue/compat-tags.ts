import type { Db } from '../../db/knex.js';
import * as repo from '../../db/repositories/compat-tags.js';
import { notFound } from '../errors.js';
import { canName, isId } from './compat-refs.js';
import type { CompatTag } from './read-models.js';

/** Compatibility tags. */
export class CompatTagService {
  constructor(private readonly db: Db) {}

  /** One tag by id or slug (an all-digit reference is tried as an id first). */
  async get(reference: string): Promise<CompatTag> {
    if (canName(reference)) {
      const byId = isId(reference) ? await repo.findCompatTag(this.db, { id: reference }) : undefined;
      const row = byId ?? (await repo.findCompatTag(this.db, { slug: reference }));
      if (row) return row;
    }
    throw notFound(`no tag '${reference}'`);
  }

  /** One tag by slug. */
  async getBySlug(slug: string): Promise<CompatTag> {
    const row = canName(slug) ? await repo.findCompatTag(this.db, { slug }) : undefined;
    if (!row) throw notFound(`no tag '${slug}'`);
    return row;
  }
}

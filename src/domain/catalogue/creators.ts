import type { Db } from '../../db/knex.js';
import * as repo from '../../db/repositories/creators.js';
import { CREATOR_ORDER_COLUMNS } from '../../db/repositories/creators.js';
import { notFound } from '../errors.js';
import { firstOf } from '../pagination/lists.js';
import { offsetWindow } from '../pagination/offset.js';
import { containsPattern, parseOrderKey } from './compat-events.js';
import { canName } from './compat-refs.js';
import type { EventCreator } from './read-models.js';

/** `/events/creators`: the accounts that created at least one event. */

export interface CreatorQuery {
  creatorName?: string;
  creator_name?: string;
  creatorHandle?: string;
  creator_handle?: string;
  order?: string;
  ascending?: boolean;
  limit?: number;
  offset?: number;
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

export class EventCreatorService {
  constructor(private readonly db: Db) {}

  async list(q: CreatorQuery): Promise<EventCreator[]> {
    const order = parseOrderKey(q.order, CREATOR_ORDER_COLUMNS, 'updatedAt');
    const window = offsetWindow(q.offset ?? 0, q.limit ?? 20);
    if (window.limit === 0) return [];
    const name = firstOf(q.creatorName, q.creator_name);
    const handle = firstOf(q.creatorHandle, q.creator_handle);
    // No name or handle holds NUL (PostgreSQL refuses it in text): such a value matches no creator.
    if (!canName(name ?? '') || !canName(handle ?? '')) return [];
    return repo.listCreators(
      this.db,
      { nameLike: name ? containsPattern(name) : undefined, handleLike: handle ? containsPattern(handle) : undefined },
      { column: order.column, ascending: q.ascending ?? false },
      window,
    );
  }

  /** One creator by user id; anything but a UUID of an account that created an event is 404. */
  async get(id: string): Promise<EventCreator> {
    const row = UUID.test(id) ? await repo.findCreator(this.db, id.toLowerCase()) : undefined;
    if (!row) throw notFound(`no event creator '${id}'`);
    return row;
  }
}

import type { Knex } from 'knex';
import type { Queryable } from '../knex.js';
import type { UsersRow } from '../tables.js';

/** Event creators: the accounts that created at least one event. */

export type CreatorRecord = Pick<UsersRow, 'id' | 'name' | 'username' | 'avatar_url' | 'created_at' | 'updated_at'>;

export interface CreatorFilter {
  /** Lower-cased LIKE patterns. */
  nameLike?: string;
  handleLike?: string;
}

export const CREATOR_ORDER_COLUMNS = {
  id: 'id',
  creatorName: 'name',
  creatorHandle: 'username',
  createdAt: 'created_at',
  updatedAt: 'updated_at',
} as const;
export type CreatorOrderColumn = (typeof CREATOR_ORDER_COLUMNS)[keyof typeof CREATOR_ORDER_COLUMNS];

function creators(db: Queryable): Knex.QueryBuilder {
  return db('users as u')
    .select('u.id', 'u.name', 'u.username', 'u.avatar_url', 'u.created_at', 'u.updated_at')
    .whereExists(db('events as e').select(db.raw('1')).whereRaw('e.creator_id = u.id'));
}

export async function listCreators(
  db: Queryable,
  filter: CreatorFilter,
  order: { column: CreatorOrderColumn; ascending: boolean },
  window: { offset: number; limit: number },
): Promise<CreatorRecord[]> {
  const q = creators(db);
  if (filter.nameLike !== undefined) q.whereRaw('lower(u.name) like ?', [filter.nameLike]);
  if (filter.handleLike !== undefined) q.whereRaw('lower(u.username) like ?', [filter.handleLike]);
  const direction = order.ascending ? 'asc' : 'desc';
  if (order.column !== 'id') q.orderBy(`u.${order.column}`, direction);
  return (await q.orderBy('u.id', direction).offset(window.offset).limit(window.limit)) as CreatorRecord[];
}

/** The creator with this user id (a UUID, checked by the caller). */
export async function findCreator(db: Queryable, id: string): Promise<CreatorRecord | undefined> {
  return creators(db).where('u.id', id).first<CreatorRecord | undefined>();
}

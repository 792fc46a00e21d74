import type { Queryable } from '../knex.js';

export async function pingDatabase(db: Queryable): Promise<void> {
  await db.raw('select 1');
}

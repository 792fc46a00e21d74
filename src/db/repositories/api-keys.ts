import type { Queryable } from '../knex.js';
import type { ApiKeysRow, UsersRow } from '../tables.js';

/** What listing shows of a key: never its secrets. */
export type ApiKeySummaryRecord = Pick<ApiKeysRow, 'id' | 'name' | 'kind' | 'scopes' | 'address' | 'created_at' | 'last_used_at'>;

const SUMMARY_COLUMNS = ['id', 'name', 'kind', 'scopes', 'address', 'created_at', 'last_used_at'] as const;
const USER_COLUMNS = ['id', 'email', 'username', 'name', 'role'] as const;

/** Serialises key creation per account (the count check, then the insert) until the transaction ends. */
export async function lockAccountKeys(tx: Queryable, userId: string): Promise<void> {
  await tx.raw(`select pg_advisory_xact_lock(hashtextextended('api_keys:' || ?, 0))`, [userId]);
}

export async function countKeys(db: Queryable, userId: string): Promise<number> {
  const row = await db('api_keys').where({ user_id: userId }).count<{ count: string }[]>('* as count').first();
  return Number(row?.count ?? 0);
}

export async function insertKey(
  db: Queryable,
  key: Pick<ApiKeysRow, 'user_id' | 'name' | 'kind' | 'scopes' | 'public_key' | 'address' | 'passphrase_hash' | 'secret_sealed'> & { id?: string },
): Promise<ApiKeySummaryRecord> {
  const [row] = await db('api_keys').insert(key).returning<ApiKeySummaryRecord[]>([...SUMMARY_COLUMNS]);
  return row!;
}

/** The account's keys, oldest first (at most 20 of them). */
export async function listKeys(db: Queryable, userId: string): Promise<ApiKeySummaryRecord[]> {
  return db('api_keys')
    .where({ user_id: userId })
    .orderBy([{ column: 'created_at' }, { column: 'id' }])
    .select(...SUMMARY_COLUMNS);
}

/** Deletes the account's key; returns whether there was one. */
export async function deleteKey(db: Queryable, userId: string, id: string): Promise<boolean> {
  const count = await db('api_keys').where({ user_id: userId, id }).delete();
  return count > 0;
}

/** A key with the account it belongs to (a named statement: run by every signed request the cache cannot answer). */
export async function findKeyWithUser(
  db: Queryable,
  id: string,
): Promise<(ApiKeysRow & { user: Pick<UsersRow, (typeof USER_COLUMNS)[number]> }) | undefined> {
  const row = await db('api_keys')
    .join('users', 'users.id', 'api_keys.user_id')
    .where('api_keys.id', id)
    .first<(ApiKeysRow & Record<string, unknown>) | undefined>(
      'api_keys.*',
      ...USER_COLUMNS.map((column) => `users.${column} as user_${column}`),
    )
    .options({ name: 'dots_find_api_key' });
  if (!row) return undefined;
  const user = Object.fromEntries(USER_COLUMNS.map((column) => [column, row[`user_${column}`]])) as Pick<UsersRow, (typeof USER_COLUMNS)[number]>;
  for (const column of USER_COLUMNS) delete row[`user_${column}`];
  return { ...row, user };
}

export async function touchKeys(db: Queryable, ids: readonly string[]): Promise<void> {
  if (ids.length === 0) return;
  await db('api_keys').whereIn('id', ids).update({ last_used_at: db.fn.now() });
}

/**
 * Records signatures (their digests) until `expiresAt`: returns the digests that were new. One statement
 * for many requests: the replay check of every signed request goes through here.
 */
export async function recordSignatures(db: Queryable, digests: readonly Buffer[], expiresAt: readonly Date[]): Promise<Buffer[]> {
  const result = await db.raw<{ rows: Array<{ digest: Buffer }> }>(
    `insert into api_key_signatures (digest, expires_at)
     select * from unnest(?::bytea[], ?::timestamptz[])
     on conflict (digest) do nothing
     returning digest`,
    [digests as Buffer[], expiresAt as Date[]],
  );
  return result.rows.map((row) => row.digest);
}

export async function forgetExpiredSignatures(db: Queryable): Promise<number> {
  return db('api_key_signatures').where('expires_at', '<', db.fn.now()).delete();
}

import type { Queryable } from '../knex.js';
import type { BalancesRow, Role, UsersRow } from '../tables.js';

/** An account with its balance, and when its first position was opened. */
export type UserWithBalanceRecord = UsersRow & Pick<BalancesRow, 'cash' | 'reserved'> & { position_created_at: string };

/** Any fixed number: serialises the operator account's check-then-create between instances starting together. */
const OPERATOR_ACCOUNT_LOCK_KEY = 7_300_451_003;

/** Holds the operator account lock until the transaction ends. */
export async function lockOperatorAccount(tx: Queryable): Promise<void> {
  await tx.raw('select pg_advisory_xact_lock(?)', [OPERATOR_ACCOUNT_LOCK_KEY]);
}

const EXACT_CREATED_AT = `to_char(users.created_at at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"')`;

export async function insertUser(
  db: Queryable,
  user: { email: string; username: string; name: string; passwordHash: string | null; role: Role },
): Promise<UsersRow> {
  const [row] = await db<UsersRow>('users')
    .insert({ email: user.email, username: user.username, name: user.name, password_hash: user.passwordHash, role: user.role })
    .returning('*');
  return row as UsersRow;
}

export async function findUserByEmail(db: Queryable, email: string): Promise<UsersRow | undefined> {
  return db<UsersRow>('users').whereRaw('lower(email) = lower(?)', [email]).first();
}

export async function isUsernameTaken(db: Queryable, username: string): Promise<boolean> {
  const row = await db<UsersRow>('users').whereRaw('lower(username) = lower(?)', [username]).first('id');
  return row !== undefined;
}

export async function updateUserCredentials(
  db: Queryable,
  id: string,
  changes: { passwordHash: string; role: Role },
): Promise<UsersRow> {
  const [row] = await db<UsersRow>('users')
    .where({ id })
    .update({ password_hash: changes.passwordHash, role: changes.role, updated_at: db.fn.now() })
    .returning('*');
  return row as UsersRow;
}

/** Opens the account's balance with a grant, and records the grant in the ledger. */
export async function grantOpeningBalance(db: Queryable, userId: string, amount: string): Promise<void> {
  await db('balances').insert({ user_id: userId, cash: amount, reserved: 0 });
  await db('ledger_entries').insert({ user_id: userId, amount, kind: 'grant', reference: 'opening balance' });
}

export async function insertSession(db: Queryable, session: { userId: string; tokenHash: Buffer; expiresAt: Date }): Promise<void> {
  await db('sessions').insert({ user_id: session.userId, token_hash: session.tokenHash, expires_at: session.expiresAt });
}

const USER_COLUMNS = ['id', 'email', 'username', 'name', 'password_hash', 'role', 'created_at', 'updated_at'] as const;

/**
 * The user of a session that is neither revoked nor expired, and when the session expires. Every
 * authenticated request the session cache cannot answer runs it: a named statement, so that it is planned
 * once per connection rather than per request (hence the explicit column list).
 */
export async function findSessionUser(db: Queryable, tokenHash: Buffer): Promise<(UsersRow & { session_expires_at: Date }) | undefined> {
  return db<UsersRow & { session_expires_at: Date }>('sessions')
    .join('users', 'users.id', 'sessions.user_id')
    .where('sessions.token_hash', tokenHash)
    .whereNull('sessions.revoked_at')
    .where('sessions.expires_at', '>', db.fn.now())
    .first<(UsersRow & { session_expires_at: Date }) | undefined>(...USER_COLUMNS.map((column) => `users.${column}`), 'sessions.expires_at as session_expires_at')
    .options({ name: 'dots_find_session_user' });
}

/** Returns whether a live session was revoked. */
export async function revokeSession(db: Queryable, tokenHash: Buffer): Promise<boolean> {
  const count = await db('sessions').where({ token_hash: tokenHash }).whereNull('revoked_at').update({ revoked_at: db.fn.now() });
  return count > 0;
}

/** Revokes every live session of the account and deletes its API keys (their triggers announce both). */
export async function revokeCredentials(db: Queryable, userId: string): Promise<void> {
  await db('sessions').where({ user_id: userId }).whereNull('revoked_at').update({ revoked_at: db.fn.now() });
  await db('api_keys').where({ user_id: userId }).delete();
}

/** Newest first; `after` is the (created_at, id) of the last row of the previous page. */
export async function listUsersWithBalances(
  db: Queryable,
  query: { limit: number; role?: Role; after?: { createdAt: string; id: string } },
): Promise<UserWithBalanceRecord[]> {
  const q = db<UserWithBalanceRecord>('users')
    .join('balances', 'balances.user_id', 'users.id')
    // The position key keeps microseconds, which a JavaScript Date would lose.
    .select('users.*', 'balances.cash', 'balances.reserved', db.raw(`${EXACT_CREATED_AT} as position_created_at`))
    .orderBy([
      { column: 'users.created_at', order: 'desc' },
      { column: 'users.id', order: 'desc' },
    ])
    .limit(query.limit);
  if (query.role) q.where('users.role', query.role);
  if (query.after) q.whereRaw('(users.created_at, users.id) < (?::timestamptz, ?::uuid)', [query.after.createdAt, query.after.id]);
  return q;
}

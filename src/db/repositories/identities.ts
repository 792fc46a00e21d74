import type { Queryable } from '../knex.js';
import type { UsersRow } from '../tables.js';

/**
 * Serialises the first sign-ins of one provider identity until the transaction ends, so that concurrent
 * ones create one account. Keyed by a hash of (issuer, subject): two identities sharing a key only wait
 * for each other.
 */
export async function lockIdentity(tx: Queryable, issuer: string, subject: string): Promise<void> {
  await tx.raw('select pg_advisory_xact_lock(hashtextextended(?, 7300451019))', [`${issuer}\n${subject}`]);
}

/** The account linked to a provider's (issuer, subject), if any. */
export async function findIdentityUser(db: Queryable, issuer: string, subject: string): Promise<(UsersRow & { identity_id: string }) | undefined> {
  return db<UsersRow & { identity_id: string }>('identities')
    .join('users', 'users.id', 'identities.user_id')
    .where({ 'identities.issuer': issuer, 'identities.subject': subject })
    .first('users.*', 'identities.id as identity_id');
}

/** Whether the account is linked to an identity at this issuer already. */
export async function hasIdentityAt(db: Queryable, userId: string, issuer: string): Promise<boolean> {
  return (await db('identities').where({ user_id: userId, issuer }).first('id')) !== undefined;
}

export async function insertIdentity(db: Queryable, identity: { userId: string; issuer: string; subject: string; email: string | undefined }): Promise<void> {
  await db('identities').insert({ user_id: identity.userId, issuer: identity.issuer, subject: identity.subject, email: identity.email ?? null });
}

/** Records a later sign-in, and the email the provider sent with it. */
export async function touchIdentity(db: Queryable, identityId: string, email: string | undefined): Promise<void> {
  await db('identities').where({ id: identityId }).update({ last_sign_in_at: db.fn.now(), email: email ?? null });
}

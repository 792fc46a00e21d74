import type { Knex } from 'knex';

/**
 * Accounts signed in through an OpenID Connect provider: `identities` links a provider's (issuer, subject)
 * to one account, at most once each; such an account may have no password (`users.password_hash` null),
 * and then no password sign-in matches it.
 */
export async function up(knex: Knex): Promise<void> {
  await knex.schema.alterTable('users', (t) => {
    t.text('password_hash').nullable().alter();
  });
  await knex.schema.createTable('identities', (t) => {
    t.bigIncrements('id');
    t.uuid('user_id').notNullable().references('users.id').onDelete('CASCADE');
    t.text('issuer').notNullable();
    t.text('subject').notNullable();
    /** The email the provider last sent, for the operator's information; the account's own email is not changed by it. */
    t.text('email');
    t.timestamp('created_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
    t.timestamp('last_sign_in_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
    t.unique(['issuer', 'subject'], { indexName: 'identities_issuer_subject_unique' });
    t.index(['user_id']);
  });
}

/** Accounts without a password keep an unusable one (no scheme matches it), so that the column can be required again. */
export async function down(knex: Knex): Promise<void> {
  await knex.schema.dropTable('identities');
  await knex('users').whereNull('password_hash').update({ password_hash: 'none' });
  await knex.schema.alterTable('users', (t) => {
    t.text('password_hash').notNullable().alter();
  });
}

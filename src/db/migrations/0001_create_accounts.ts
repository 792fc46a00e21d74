import type { Knex } from 'knex';

/** Accounts, their session tokens, Dots balances and the ledger of every movement of Dots. */
export async function up(knex: Knex): Promise<void> {
  await knex.schema.createTable('users', (t) => {
    t.uuid('id').primary().defaultTo(knex.raw('gen_random_uuid()'));
    t.text('email').notNullable();
    t.text('username').notNullable();
    t.text('name').notNullable().defaultTo('');
    t.text('password_hash').notNullable();
    t.text('role').notNullable().defaultTo('USER');
    t.timestamp('created_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
    t.timestamp('updated_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
    t.check("role in ('USER', 'ADMIN')", [], 'users_role_check');
  });
  await knex.raw('create unique index users_email_unique on users (lower(email))');
  await knex.raw('create unique index users_username_unique on users (lower(username))');
  await knex.raw('create index users_created_at_id on users (created_at desc, id desc)');

  await knex.schema.createTable('sessions', (t) => {
    t.bigIncrements('id');
    t.uuid('user_id').notNullable().references('users.id').onDelete('CASCADE');
    t.binary('token_hash').notNullable().unique();
    t.timestamp('created_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
    t.timestamp('expires_at', { useTz: true }).notNullable();
    t.timestamp('revoked_at', { useTz: true });
    t.index(['user_id']);
  });

  await knex.schema.createTable('balances', (t) => {
    t.uuid('user_id').primary().references('users.id').onDelete('CASCADE');
    t.decimal('cash', 28, 8).notNullable();
    t.decimal('reserved', 28, 8).notNullable().defaultTo(0);
    t.check('cash >= 0', [], 'balances_cash_non_negative');
    t.check('reserved >= 0', [], 'balances_reserved_non_negative');
  });

  await knex.schema.createTable('ledger_entries', (t) => {
    t.bigIncrements('id');
    t.uuid('user_id').notNullable().references('users.id').onDelete('CASCADE');
    t.decimal('amount', 28, 8).notNullable();
    t.text('kind').notNullable();
    t.text('reference');
    t.timestamp('created_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
    t.index(['user_id', 'id']);
  });
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.dropTable('ledger_entries');
  await knex.schema.dropTable('balances');
  await knex.schema.dropTable('sessions');
  await knex.schema.dropTable('users');
}

import type { Knex } from 'knex';

/**
 * Trades, fills and ledger entries hold no foreign keys. They are records of what happened: written in the
 * same statement as the rows they name (the orders matched, the balances changed), and never updated or
 * deleted. A fill's account and market, and a trade's market, are those of its orders; a ledger entry's
 * account is that of the balance it changes; the foreign keys of orders and balances hold those to existing
 * rows. Checking each reference costs PostgreSQL a lookup and a row lock: 7 for a trade and its two fills, 2
 * for each ledger entry, about 15% of its time per placement. The indexes that served only the keys'
 * cascades (fills by order, by trade) go with them. The trading invariants of the tests check every
 * reference instead.
 */
const KEYS = [
  ['trades', 'trades_market_id_fkey', 'market_id', 'markets', 'cascade'],
  ['trades', 'trades_maker_order_id_fkey', 'maker_order_id', 'orders', 'cascade'],
  ['trades', 'trades_taker_order_id_fkey', 'taker_order_id', 'orders', 'cascade'],
  ['fills', 'fills_trade_id_fkey', 'trade_id', 'trades', 'cascade'],
  ['fills', 'fills_order_id_fkey', 'order_id', 'orders', 'cascade'],
  ['fills', 'fills_account_id_fkey', 'account_id', 'users', 'cascade'],
  ['fills', 'fills_market_id_fkey', 'market_id', 'markets', 'cascade'],
  ['ledger_entries', 'ledger_entries_user_id_foreign', 'user_id', 'users', 'cascade'],
  ['ledger_entries', 'ledger_entries_market_id_fkey', 'market_id', 'markets', 'set null'],
] as const;

export async function up(knex: Knex): Promise<void> {
  for (const [table, name] of KEYS) await knex.raw(`alter table ${table} drop constraint ${name}`);
  await knex.raw('drop index fills_order_id');
  await knex.raw('drop index fills_trade_id');
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw('create index fills_order_id on fills (order_id)');
  await knex.raw('create index fills_trade_id on fills (trade_id)');
  for (const [table, name, column, target, onDelete] of KEYS) {
    await knex.raw(`alter table ${table} add constraint ${name} foreign key (${column}) references ${target} (id) on delete ${onDelete}`);
  }
}

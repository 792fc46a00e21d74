import type { Knex } from 'knex';
import { sqlFunctions } from '../sql-functions.js';

/**
 * Order-book (CLOB) identifiers and signed orders.
 *
 * - `markets.condition_id` (0x and 64 hex digits) and `yes_token_id`, `no_token_id` (decimal uint256 text):
 *   derived from the market's id and ticker by `market_outcome_tokens` (src/db/functions/), which a BEFORE
 *   INSERT trigger calls, so that every writer (administration, demo data, SQL by hand) gets them; existing
 *   markets are filled here by the same function. Each has a unique index: a token id finds its market by one index.
 * - `orders.order_hash`, `maker_address`, `salt`, `nonce`, `signature`: what an order placed as an
 *   order-book client's signed order was signed with (null for other orders); the order hash is unique, so a
 *   signed order is placed once.
 */
const FUNCTIONS = ['market_outcome_tokens', 'markets_outcome_tokens'];

export async function up(knex: Knex): Promise<void> {
  for (const f of sqlFunctions().filter((file) => FUNCTIONS.includes(file.name))) await knex.raw(f.sql);
  await knex.raw('alter table markets add column condition_id text, add column yes_token_id text, add column no_token_id text');
  await knex.raw(`update markets m set (condition_id, yes_token_id, no_token_id) = (select * from market_outcome_tokens(m.id, m.ticker))`);
  await knex.raw('alter table markets alter column condition_id set not null, alter column yes_token_id set not null, alter column no_token_id set not null');
  for (const column of ['condition_id', 'yes_token_id', 'no_token_id']) {
    await knex.raw(`create unique index markets_${column}_unique on markets (${column})`);
  }
  await knex.raw('create trigger markets_outcome_tokens before insert on markets for each row execute function markets_outcome_tokens()');

  await knex.raw(`alter table orders
    add column order_hash text, add column maker_address text, add column salt numeric(78, 0), add column nonce numeric(78, 0), add column signature text`);
  await knex.raw('create unique index orders_order_hash_unique on orders (order_hash) where order_hash is not null');
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw('drop index orders_order_hash_unique');
  await knex.raw('alter table orders drop column order_hash, drop column maker_address, drop column salt, drop column nonce, drop column signature');
  await knex.raw('drop trigger markets_outcome_tokens on markets');
  await knex.raw('alter table markets drop column condition_id, drop column yes_token_id, drop column no_token_id');
  await knex.raw('drop function markets_outcome_tokens()');
  await knex.raw('drop function market_outcome_tokens(bigint, text)');
}

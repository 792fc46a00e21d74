import type { Knex } from 'knex';

/**
 * Candles are written by the rollup refresh that follows each trading transaction (src/domain/trading/rollups.ts),
 * off the transaction itself, from the trade tape: `market_candle_marks.last_trade_id` is the last trade
 * of each market that the market's candles hold. A market's trades are made under its lock, so they commit in
 * id order, and every trade after the mark is one the candles still lack. Markets without a row have had none
 * of their trades counted. Filled here with each market's last trade, which the candles already hold.
 */
export async function up(knex: Knex): Promise<void> {
  await knex.raw('create table market_candle_marks (market_id bigint primary key, last_trade_id bigint not null)');
  await knex.raw('insert into market_candle_marks (market_id, last_trade_id) select market_id, max(id) from trades group by market_id');
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw('drop table if exists market_candle_marks');
}

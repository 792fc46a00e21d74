import type { Knex } from 'knex';

/**
 * Trading: orders, the fills and trades of their executions, positions, settlements of resolved markets,
 * and what the ledger needs to account for every movement of Dots.
 *
 * Units: prices numeric(4,2) in Dots (0.01..0.99, outcome frame), counts numeric(20,4) in contracts
 * (0.0001 quantum), money numeric(28,8) in Dots. Nothing may go negative: CHECK constraints say so.
 *
 * - `orders`: `count` is the original size; `filled + remaining + cancelled = count` always (decrease and
 *   cancel move quantity from `remaining` to `cancelled`). Live (OPEN, PARTIAL) exactly when `remaining > 0`.
 *   `book_side` and `yes_price` (generated) place the order in the market's YES-frame book; `sequence`
 *   (one global sequence) is its time priority.
 * - `trades`: the public tape, one row per execution; `fills`: the two sides of each execution, one row
 *   per party (listing an account's fills is then one index range).
 * - `positions`: shares held per account, market and outcome, and those reserved by resting sells.
 * - `settlements`: what each holder of a resolved market was paid.
 * - `ledger_entries` gains `reserved_change` and `market_id`: each row is one movement; `amount` changes the
 *   account's holdings (cash + reserved) and `reserved_change` its reserved part, so that per account
 *   sum(amount) = cash + reserved and sum(reserved_change) = reserved.
 */
export async function up(knex: Knex): Promise<void> {
  await knex.raw('create sequence order_sequence as bigint');

  await knex.raw(`
    create table orders (
      id uuid primary key,
      account_id uuid not null references users (id) on delete cascade,
      market_id bigint not null references markets (id) on delete cascade,
      side text not null,
      action text not null,
      price numeric(4, 2) not null,
      count numeric(20, 4) not null,
      remaining numeric(20, 4) not null,
      filled numeric(20, 4) not null default 0,
      cancelled numeric(20, 4) not null default 0,
      status text not null,
      time_in_force text not null,
      post_only boolean not null default false,
      reduce_only boolean not null default false,
      client_order_id text not null,
      builder_code text not null,
      expiration_ts timestamptz,
      sequence bigint not null unique,
      cancel_reason text,
      book_side text not null generated always as (case when (side = 'yes') = (action = 'buy') then 'bid' else 'ask' end) stored,
      yes_price numeric(4, 2) not null generated always as (case when side = 'yes' then price else 1 - price end) stored,
      created_at timestamptz not null default now(),
      updated_at timestamptz not null default now(),
      constraint orders_side_check check (side in ('yes', 'no')),
      constraint orders_action_check check (action in ('buy', 'sell')),
      constraint orders_price_check check (price between 0.01 and 0.99 and price = round(price, 2)),
      constraint orders_count_positive check (count > 0),
      constraint orders_quantities_non_negative check (remaining >= 0 and filled >= 0 and cancelled >= 0),
      constraint orders_quantities_add_up check (filled + remaining + cancelled = count),
      constraint orders_status_check check (status in ('OPEN', 'PARTIAL', 'FILLED', 'CANCELLED')),
      constraint orders_live_has_remaining check ((status in ('OPEN', 'PARTIAL')) = (remaining > 0)),
      constraint orders_open_unfilled check (status <> 'OPEN' or filled = 0),
      constraint orders_partial_filled check (status <> 'PARTIAL' or filled > 0),
      constraint orders_filled_check check (status <> 'FILLED' or (filled > 0 and remaining = 0)),
      constraint orders_time_in_force_check check (time_in_force in ('GTC', 'IOC', 'FOK')),
      constraint orders_builder_code_check check (builder_code ~ '^0x[0-9a-fA-F]{64}$')
    )`);
  await knex.raw('create unique index orders_account_client_order_id_unique on orders (account_id, client_order_id)');
  // The book: a side of a market in price then time priority (bids read backwards).
  await knex.raw(`create index orders_book on orders (market_id, book_side, yes_price, sequence) where status in ('OPEN', 'PARTIAL')`);
  // An account's orders, newest first, with or without a market filter; and its live ones (cancel all).
  await knex.raw('create index orders_account_created on orders (account_id, created_at desc, id desc)');
  await knex.raw('create index orders_account_market_created on orders (account_id, market_id, created_at desc, id desc)');
  await knex.raw(`create index orders_account_live on orders (account_id, market_id) where status in ('OPEN', 'PARTIAL')`);
  // The expiry sweep.
  await knex.raw(`create index orders_expiry on orders (expiration_ts) where status in ('OPEN', 'PARTIAL') and expiration_ts is not null`);

  await knex.raw(`
    create table trades (
      id bigint generated always as identity primary key,
      market_id bigint not null references markets (id) on delete cascade,
      yes_price numeric(4, 2) not null,
      count numeric(20, 4) not null,
      taker_side text not null,
      maker_order_id uuid not null references orders (id) on delete cascade,
      taker_order_id uuid not null references orders (id) on delete cascade,
      kind text not null,
      created_at timestamptz not null default now(),
      constraint trades_price_check check (yes_price between 0.01 and 0.99),
      constraint trades_count_positive check (count > 0),
      constraint trades_taker_side_check check (taker_side in ('yes', 'no')),
      constraint trades_kind_check check (kind in ('transfer_yes', 'transfer_no', 'mint', 'merge'))
    )`);
  await knex.raw('create index trades_market_id on trades (market_id, id desc)');

  await knex.raw(`
    create table fills (
      id bigint generated always as identity primary key,
      trade_id bigint not null references trades (id) on delete cascade,
      order_id uuid not null references orders (id) on delete cascade,
      account_id uuid not null references users (id) on delete cascade,
      market_id bigint not null references markets (id) on delete cascade,
      side text not null,
      action text not null,
      price numeric(4, 2) not null,
      count numeric(20, 4) not null,
      role text not null,
      created_at timestamptz not null default now(),
      constraint fills_side_check check (side in ('yes', 'no')),
      constraint fills_action_check check (action in ('buy', 'sell')),
      constraint fills_price_check check (price between 0.01 and 0.99),
      constraint fills_count_positive check (count > 0),
      constraint fills_role_check check (role in ('maker', 'taker'))
    )`);
  await knex.raw('create index fills_account_id on fills (account_id, id desc)');
  await knex.raw('create index fills_account_market_id on fills (account_id, market_id, id desc)');
  await knex.raw('create index fills_order_id on fills (order_id)');
  await knex.raw('create index fills_trade_id on fills (trade_id)');

  await knex.raw(`
    create table positions (
      id bigint generated always as identity primary key,
      account_id uuid not null references users (id) on delete cascade,
      market_id bigint not null references markets (id) on delete cascade,
      side text not null,
      shares numeric(20, 4) not null default 0,
      reserved numeric(20, 4) not null default 0,
      created_at timestamptz not null default now(),
      updated_at timestamptz not null default now(),
      constraint positions_side_check check (side in ('yes', 'no')),
      constraint positions_shares_non_negative check (shares >= 0),
      constraint positions_reserved_non_negative check (reserved >= 0),
      constraint positions_reserved_within_shares check (reserved <= shares),
      constraint positions_account_market_side_unique unique (account_id, market_id, side)
    )`);
  await knex.raw('create index positions_account_id on positions (account_id, id desc)');
  await knex.raw('create index positions_market_id on positions (market_id)');

  await knex.raw(`
    create table settlements (
      id bigint generated always as identity primary key,
      account_id uuid not null references users (id) on delete cascade,
      market_id bigint not null references markets (id) on delete cascade,
      result text not null,
      yes_count numeric(20, 4) not null,
      no_count numeric(20, 4) not null,
      payout numeric(28, 8) not null,
      created_at timestamptz not null default now(),
      constraint settlements_result_check check (result in ('yes', 'no', 'invalid')),
      constraint settlements_non_negative check (yes_count >= 0 and no_count >= 0 and payout >= 0),
      constraint settlements_account_market_unique unique (account_id, market_id)
    )`);
  await knex.raw('create index settlements_account_id on settlements (account_id, id desc)');

  await knex.raw('alter table ledger_entries add column reserved_change numeric(28, 8) not null default 0');
  await knex.raw('alter table ledger_entries add column market_id bigint references markets (id) on delete set null');
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw('alter table ledger_entries drop column market_id');
  await knex.raw('alter table ledger_entries drop column reserved_change');
  for (const table of ['settlements', 'positions', 'fills', 'trades', 'orders']) await knex.raw(`drop table ${table}`);
  await knex.raw('drop sequence order_sequence');
}

import type { Knex } from 'knex';

/**
 * Order sessions: a maker's heartbeat keeps its session alive; when a session expires, every resting order
 * of its account is cancelled.
 *
 * - One row per session. `expires_at` is always `last_seen_at` + `timeout_seconds`; a renewal moves both.
 * - `cancelled_at` is set once, by whoever expires the session (the sweep, or a call that finds it past
 *   `expires_at`), in the same transaction that cancels the account's orders; `cancelled_count` is how many
 *   orders that cancelled. A session with `cancelled_at` null is open: live while `expires_at` is ahead.
 * - At most one open session per account (`order_sessions_account_open`), so "the account's session" is
 *   one row; the expiry sweep finds open sessions past `expires_at` through `order_sessions_expiry`.
 */
export async function up(knex: Knex): Promise<void> {
  await knex.raw(`
    create table order_sessions (
      id uuid primary key,
      account_id uuid not null references users (id) on delete cascade,
      timeout_seconds integer not null,
      last_seen_at timestamptz not null,
      expires_at timestamptz not null,
      cancelled_at timestamptz,
      cancelled_count integer not null default 0,
      created_at timestamptz not null default now(),
      constraint order_sessions_timeout_positive check (timeout_seconds > 0),
      constraint order_sessions_expiry_follows check (expires_at = last_seen_at + timeout_seconds * interval '1 second'),
      constraint order_sessions_cancelled_count_non_negative check (cancelled_count >= 0),
      constraint order_sessions_count_only_when_cancelled check (cancelled_at is not null or cancelled_count = 0)
    )`);
  await knex.raw('create unique index order_sessions_account_open on order_sessions (account_id) where cancelled_at is null');
  await knex.raw('create index order_sessions_expiry on order_sessions (expires_at) where cancelled_at is null');
  await knex.raw('create index order_sessions_account_created on order_sessions (account_id, created_at desc, id desc)');
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw('drop table order_sessions');
}

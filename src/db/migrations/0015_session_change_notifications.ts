import type { Knex } from 'knex';

/**
 * Every change of a session or an account that can alter what a token authenticates as (a session
 * revoked, expired early or deleted; an account updated or deleted; either table truncated) is announced
 * on the `dots_sessions` channel at commit: `token:<sha-256 hex>`, `user:<id>` or `*` (everything). Each
 * process keeps the sessions it looked up recently (src/domain/accounts/session-cache.ts) and forgets
 * them on these notifications, so a logout, or a change made by hand in SQL, is honoured by every process.
 * Triggers rather than the service's own NOTIFY, so that no path that changes these rows can miss it.
 */
export async function up(knex: Knex): Promise<void> {
  await knex.raw(`
    create function notify_session_change() returns trigger
    language plpgsql as $$
    begin
      if tg_op = 'TRUNCATE' then
        perform pg_notify('dots_sessions', '*');
      elsif tg_table_name = 'sessions' then
        perform pg_notify('dots_sessions', 'token:' || encode(old.token_hash, 'hex'));
      else
        perform pg_notify('dots_sessions', 'user:' || old.id::text);
      end if;
      return null;
    end $$;

    create trigger sessions_notify_change after update or delete on sessions
      for each row execute function notify_session_change();
    create trigger sessions_notify_truncate after truncate on sessions
      for each statement execute function notify_session_change();
    create trigger users_notify_change after update or delete on users
      for each row execute function notify_session_change();
    create trigger users_notify_truncate after truncate on users
      for each statement execute function notify_session_change();
  `);
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw(`
    drop trigger users_notify_truncate on users;
    drop trigger users_notify_change on users;
    drop trigger sessions_notify_truncate on sessions;
    drop trigger sessions_notify_change on sessions;
    drop function notify_session_change();
  `);
}

-- Announces on channel dots_sessions, at commit, a change of a session or an account that can alter what a token
-- authenticates as: `token:<sha-256 hex>`, `user:<id>`, or `*` on TRUNCATE. Each process forgets the sessions it
-- cached on these (src/domain/accounts/session-cache.ts); triggers, so that no path that changes these rows misses it.
create or replace function notify_session_change() returns trigger
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
end
$$;

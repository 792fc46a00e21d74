import type { Knex } from 'knex';

/**
 * API keys for trading bots (src/domain/api-keys/). `api_keys`: one row per live key (a revoked key is
 * deleted), of kind `rsa` (its public key, as SPKI PEM: requests are signed with the private key, which the
 * service never keeps) or `hmac` (order-book credentials: the HMAC secret sealed with AES-256-GCM under a
 * key the database never sees, the passphrase as its SHA-256, and the address the key is bound to).
 *
 * A change to a key that can alter what it authenticates (deleted, or its scopes or secrets changed) is
 * announced on the session-change channel of migration 0015 as `key:<id>`, so that every process forgets
 * it at once; `last_used_at` changes announce nothing.
 *
 * `api_key_signatures` remembers the digest of every signature accepted until its timestamp leaves the
 * window, so that a replay is refused whichever process it reaches. Unlogged: a crash empties it, and the
 * window (seconds) is all a replay could then use; in return its inserts write no WAL.
 */
export async function up(knex: Knex): Promise<void> {
  await knex.raw(`
    create table api_keys (
      id uuid primary key default gen_random_uuid(),
      user_id uuid not null references users(id) on delete cascade,
      name text not null check (char_length(name) between 1 and 100),
      kind text not null check (kind in ('rsa', 'hmac')),
      scopes text[] not null check (cardinality(scopes) between 1 and 2 and scopes <@ array['read', 'trade']),
      public_key text,
      address text,
      passphrase_hash bytea,
      secret_sealed bytea,
      created_at timestamptz not null default now(),
      last_used_at timestamptz,
      check (kind <> 'rsa' or public_key is not null),
      check (kind <> 'hmac' or (address is not null and passphrase_hash is not null and secret_sealed is not null))
    );
    create index api_keys_user_id on api_keys (user_id, created_at);

    create function notify_api_key_change() returns trigger
    language plpgsql as $$
    begin
      if tg_op = 'TRUNCATE' then
        perform pg_notify('dots_sessions', '*');
      else
        perform pg_notify('dots_sessions', 'key:' || old.id::text);
      end if;
      return null;
    end $$;

    create trigger api_keys_notify_change
      after update of user_id, kind, scopes, public_key, address, passphrase_hash, secret_sealed or delete on api_keys
      for each row execute function notify_api_key_change();
    create trigger api_keys_notify_truncate after truncate on api_keys
      for each statement execute function notify_api_key_change();

    create unlogged table api_key_signatures (
      digest bytea primary key,
      expires_at timestamptz not null
    );
  `);
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw(`
    drop table api_key_signatures;
    drop trigger api_keys_notify_truncate on api_keys;
    drop trigger api_keys_notify_change on api_keys;
    drop function notify_api_key_change();
    drop table api_keys;
  `);
}

import type { Knex } from 'knex';

/**
 * `feed_append_records(market_ids, events, accounts)`: what feed_append (migration 0010) writes, without its
 * pg_notify. A transaction that NOTIFYs takes a global lock at commit, so every trading transaction calling
 * feed_append committed one at a time; with this function the process that committed sends the
 * notification itself after COMMIT (coalesced with others, src/db/repositories/feed.ts FeedNotifier).
 * Returns the notification items, `market_id:seq:accounts` joined by commas (null when nothing was written).
 * feed_append stays for transactions whose commit the trading service does not see (closing, resolving,
 * order-session expiry run inside another service's transaction).
 */
export async function up(knex: Knex): Promise<void> {
  await knex.raw(`
    create function feed_append_records(p_market_ids bigint[], p_events text[], p_accounts text[]) returns text
    language plpgsql as $$
    declare
      payload text;
    begin
      with input as (
        select v.market_id, v.events, v.accounts from unnest(p_market_ids, p_events, p_accounts) as v (market_id, events, accounts)
      ), seqs as (
        insert into feed_sequences as s (market_id, seq)
        select input.market_id, 1 from input
        on conflict (market_id) do update set seq = s.seq + 1
        returning s.market_id, s.seq
      ), written as (
        insert into feed_events (market_id, seq, ticker, events)
        select i.market_id, q.seq, m.ticker, i.events::json
          from input i
          join seqs q on q.market_id = i.market_id
          join markets m on m.id = i.market_id
        returning feed_events.market_id, feed_events.seq
      )
      select string_agg(w.market_id::text || ':' || w.seq::text || ':' || i.accounts, ',') into payload
        from written w join input i on i.market_id = w.market_id;
      return payload;
    end
    $$`);
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw('drop function feed_append_records(bigint[], text[], text[])');
}

import type { Knex } from 'knex';

/**
 * The real-time feed's outbox (src/domain/feed/): what each trading transaction changed, per market, for
 * every process's WebSocket clients.
 *
 * - `feed_sequences`: per market, the sequence number of its latest feed record. A trading transaction
 *   increments it while it holds the market's row lock, so a market's records are numbered in commit
 *   order, without gaps, across every process.
 * - `feed_events`: one record per market per trading transaction (written in that transaction, by one
 *   statement that also NOTIFYs the listeners at commit): the book changes, trades, fills, changed orders
 *   and market figures it made (`events`, built by the service; `json`, not `jsonb`: stored and read whole,
 *   never queried into, so not parsed on the way in). `created_at` is the time of the write, just before
 *   the commit. Records are kept for a few minutes (pruned by the feed service): long enough for a listener
 *   that lost its connection to catch up, never a history.
 * - `feed_append(market_ids, events, accounts)`: writes one record per market and NOTIFYs channel
 *   `dots_feed` with `market_id:seq:accounts,...` (or `*` when that would not fit in a payload). A
 *   function rather than a statement sent each time: PL/pgSQL keeps its plan for the session, and planning
 *   the statement cost more than running it, inside every trading transaction, with the market locked.
 */
export async function up(knex: Knex): Promise<void> {
  await knex.raw(`
    create table feed_sequences (
      market_id bigint primary key references markets (id) on delete cascade,
      seq bigint not null,
      constraint feed_sequences_seq_positive check (seq > 0)
    )`);
  await knex.raw(`
    create table feed_events (
      market_id bigint not null,
      seq bigint not null,
      ticker text not null,
      events json not null,
      created_at timestamptz not null default clock_timestamp(),
      primary key (market_id, seq)
    )`);
  // Pruning by age.
  await knex.raw('create index feed_events_created_at on feed_events (created_at)');
  await knex.raw(`
    create function feed_append(p_market_ids bigint[], p_events text[], p_accounts text[]) returns void
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
      ), items as (
        select w.market_id::text || ':' || w.seq::text || ':' || i.accounts as item from written w join input i on i.market_id = w.market_id
      )
      select case when sum(length(item) + 1) > 7900 then '*' else string_agg(item, ',') end into payload from items;
      perform pg_notify('dots_feed', payload);
    end
    $$`);
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw('drop function feed_append(bigint[], text[], text[])');
  await knex.raw('drop table feed_events');
  await knex.raw('drop table feed_sequences');
}

import type { Knex } from 'knex';

/**
 * `feed_append_records` takes the records' events as one JSON array (an element per record) instead of an array
 * of JSON texts, which the driver had to quote for an array literal (every double quote of every record
 * escaped) and PostgreSQL to unquote again. A new signature: the old function is dropped here (on a new
 * database the functions are created after the migrations, so there is none yet), and the new one
 * created from its file (src/db/functions/feed_append_records.sql) after the migrations.
 */
export async function up(knex: Knex): Promise<void> {
  await knex.raw('drop function if exists feed_append_records(bigint[], text[], text[])');
}

/** Back to the function this migration replaced, as it was written. */
export async function down(knex: Knex): Promise<void> {
  await knex.raw('drop function if exists feed_append_records(bigint[], json, text[])');
  await knex.raw(PREVIOUS);
}

const PREVIOUS = `
create or replace function feed_append_records(p_market_ids bigint[], p_events text[], p_accounts text[]) returns json
language plpgsql as $$
declare
  v_written_at timestamptz := clock_timestamp();
  v_result json;
begin
  with input as (
    select v.market_id, v.events, v.accounts, v.ord, row_number() over (partition by v.market_id order by v.ord) as nth
      from unnest(p_market_ids, p_events, p_accounts) with ordinality as v (market_id, events, accounts, ord)
  ), counts as (
    select input.market_id, count(*) as n from input group by input.market_id
  ), seqs as (
    insert into feed_sequences as s (market_id, seq)
    select counts.market_id, counts.n from counts
    on conflict (market_id) do update set seq = s.seq + excluded.seq
    returning s.market_id, s.seq
  ), numbered as (
    select i.market_id, q.seq - c.n + i.nth as seq, i.events, i.accounts, i.ord, m.ticker
      from input i
      join counts c on c.market_id = i.market_id
      join seqs q on q.market_id = i.market_id
      join markets m on m.id = i.market_id
  ), written as (
    insert into feed_events (market_id, seq, ticker, events, created_at)
    select n.market_id, n.seq, n.ticker, n.events::json, v_written_at
      from numbered n
  )
  select case when count(*) > 0 then json_build_object(
           'notification', string_agg(n.market_id::text || ':' || n.seq::text || ':' || n.accounts, ',' order by n.ord),
           'written_at', v_written_at::text,
           'seqs', json_agg(n.seq order by n.ord),
           'tickers', json_agg(n.ticker order by n.ord)
         ) end
    into v_result
    from numbered n;
  return v_result;
end
$$;
`;

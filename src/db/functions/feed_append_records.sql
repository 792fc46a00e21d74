-- Writes one real-time feed record per entry (a market may come more than once: its records are numbered in the order given),
-- the entries' events given as one JSON array (an element per entry: no array-literal quoting of JSON text),
-- incrementing each market's feed_sequences row, inside the caller's trading transaction, which holds the markets' locks.
-- Every record of a call is written at one time, `written_at` (its created_at). Returns, for the records written (null when
-- none was):
-- - notification: the items `market_id:seq:accounts` joined by commas in the order given, for the caller to NOTIFY after its
--   commit (src/db/repositories/feed.ts appendFeedRecords);
-- - written_at, as text (parsed as pg parses a timestamptz column, so that a record the caller publishes itself is the record
--   other processes read);
-- - seqs and tickers: each record's sequence number and market ticker, in the order given.
-- A function rather than a statement sent each time: PL/pgSQL keeps its plan for the session.
create or replace function feed_append_records(p_market_ids bigint[], p_events json, p_accounts text[]) returns json
language plpgsql as $$
declare
  v_written_at timestamptz := clock_timestamp();
  v_result json;
begin
  with input as (
    select v.market_id, v.events, v.accounts, v.ord, row_number() over (partition by v.market_id order by v.ord) as nth
      from rows from (unnest(p_market_ids), json_array_elements(p_events), unnest(p_accounts)) with ordinality as v (market_id, events, accounts, ord)
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
    select n.market_id, n.seq, n.ticker, n.events, v_written_at
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

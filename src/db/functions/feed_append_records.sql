-- Writes one real-time feed record per entry (a market may come more than once: its records are numbered in the order given),
-- incrementing each market's feed_sequences row, inside the caller's trading transaction, which holds the markets' locks.
-- Returns the notification items, `market_id:seq:accounts` joined by commas in the order given (null when nothing
-- was written), for the caller to NOTIFY after its commit (src/db/repositories/feed.ts appendFeedRecords). A
-- function rather than a statement sent each time: PL/pgSQL keeps its plan for the session.
create or replace function feed_append_records(p_market_ids bigint[], p_events text[], p_accounts text[]) returns text
language plpgsql as $$
declare
  payload text;
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
    select i.market_id, q.seq - c.n + i.nth as seq, i.events, i.accounts, i.ord
      from input i
      join counts c on c.market_id = i.market_id
      join seqs q on q.market_id = i.market_id
  ), written as (
    insert into feed_events (market_id, seq, ticker, events)
    select n.market_id, n.seq, m.ticker, n.events::json
      from numbered n
      join markets m on m.id = n.market_id
  )
  select string_agg(n.market_id::text || ':' || n.seq::text || ':' || n.accounts, ',' order by n.ord) into payload
    from numbered n;
  return payload;
end
$$;

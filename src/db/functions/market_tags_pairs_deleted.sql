-- tag_market_pairs: subtracts the pairs of the links a DELETE on market_tags removed (rows that drop to 0 stay, with 0).
create or replace function market_tags_pairs_deleted() returns trigger
language plpgsql as $$
begin
  -- lost pairs of a market: (removed, removed), (removed, still carried) and (still carried, removed)
  update tag_market_pairs p set markets = p.markets - l.n
  from (
    select x.a, x.b, count(*) as n from (
      select r.tag_id as a, r2.tag_id as b from removed r join removed r2 on r2.market_id = r.market_id
      union all
      select r.tag_id, mt.tag_id from removed r join market_tags mt on mt.market_id = r.market_id
      union all
      select mt.tag_id, r.tag_id from removed r join market_tags mt on mt.market_id = r.market_id
    ) x group by x.a, x.b order by x.a, x.b
  ) l
  where p.tag_id = l.a and p.other_tag_id = l.b;
  return null;
end
$$;

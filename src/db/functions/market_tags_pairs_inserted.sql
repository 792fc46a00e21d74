-- tag_market_pairs (for each ordered pair of tags, the markets carrying both): adds the pairs of the links an INSERT on market_tags added, upserted in key order so that concurrent writers lock pairs in one order.
create or replace function market_tags_pairs_inserted() returns trigger
language plpgsql as $$
begin
  -- new pairs of a market: (added, any tag it now carries) and (tag it already carried, added)
  insert into tag_market_pairs (tag_id, other_tag_id, markets)
  select x.a, x.b, count(*) from (
    select a.tag_id as a, mt.tag_id as b from added a join market_tags mt on mt.market_id = a.market_id
    union all
    select mt.tag_id, a.tag_id from added a join market_tags mt on mt.market_id = a.market_id
     where not exists (select 1 from added n where n.market_id = mt.market_id and n.tag_id = mt.tag_id)
  ) x group by x.a, x.b order by x.a, x.b
  on conflict (tag_id, other_tag_id) do update set markets = tag_market_pairs.markets + excluded.markets;
  return null;
end
$$;

-- tag_market_pairs: recomputed from scratch after an UPDATE or TRUNCATE of market_tags (nothing does either).
create or replace function market_tags_pairs_recomputed() returns trigger
language plpgsql as $$
begin
    delete from tag_market_pairs;

insert into tag_market_pairs (tag_id, other_tag_id, markets)
select a.tag_id, b.tag_id, count(*) from market_tags a join market_tags b on b.market_id = a.market_id
group by a.tag_id, b.tag_id order by a.tag_id, b.tag_id;
    return null;
  end
$$;

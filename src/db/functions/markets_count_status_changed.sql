-- market_status_counts: moves a market from its old status's count to its new one (row trigger on markets, only when status changes).
create or replace function markets_count_status_changed() returns trigger
language plpgsql as $$
begin
  insert into market_status_counts (status, markets)
  select s, n from (values (old.status, -1), (new.status, 1)) v (s, n) order by s
  on conflict (status) do update set markets = market_status_counts.markets + excluded.markets;
  return null;
end
$$;

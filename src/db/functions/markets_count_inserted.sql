-- market_status_counts (markets per status): adds the markets an INSERT statement added (statement-level trigger on markets, transition table `added`).
create or replace function markets_count_inserted() returns trigger
language plpgsql as $$
begin
  insert into market_status_counts (status, markets)
  select status, count(*) from added group by status order by status
  on conflict (status) do update set markets = market_status_counts.markets + excluded.markets;
  return null;
end
$$;

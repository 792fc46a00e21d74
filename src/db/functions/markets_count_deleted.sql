-- market_status_counts: removes the markets a DELETE statement removed (statement-level trigger on markets, transition table `removed`).
create or replace function markets_count_deleted() returns trigger
language plpgsql as $$
begin
  update market_status_counts c set markets = c.markets - r.n
  from (select status, count(*) as n from removed group by status) r where c.status = r.status;
  return null;
end
$$;

-- market_status_counts: emptied when markets is truncated.
create or replace function markets_count_truncated() returns trigger
language plpgsql as $$
begin
  update market_status_counts set markets = 0 where markets <> 0;
  return null;
end
$$;

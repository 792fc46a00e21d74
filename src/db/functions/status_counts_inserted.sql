-- Rows per status (market_status_counts, event_status_counts): adds the rows an INSERT statement added. Statement-level
-- trigger with transition table `added`; its arguments name the counter table and its count column.
create or replace function status_counts_inserted() returns trigger
language plpgsql as $$
begin
  execute format(
    'insert into %1$I (status, %2$I) select status, count(*) from added group by status order by status
     on conflict (status) do update set %2$I = %1$I.%2$I + excluded.%2$I', tg_argv[0], tg_argv[1]);
  return null;
end
$$;

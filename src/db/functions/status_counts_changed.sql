-- Rows per status: moves a row from its old status's count to its new one. Row trigger, only when the status changes;
-- its arguments name the counter table and its count column.
create or replace function status_counts_changed() returns trigger
language plpgsql as $$
begin
  execute format(
    'insert into %1$I (status, %2$I) select s, n from (values ($1, -1), ($2, 1)) v (s, n) order by s
     on conflict (status) do update set %2$I = %1$I.%2$I + excluded.%2$I', tg_argv[0], tg_argv[1])
    using old.status, new.status;
  return null;
end
$$;

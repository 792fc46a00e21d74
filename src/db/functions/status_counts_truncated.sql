-- Rows per status: every count back to 0 when the counted table is truncated; its arguments name the counter table and
-- its count column.
create or replace function status_counts_truncated() returns trigger
language plpgsql as $$
begin
  execute format('update %1$I set %2$I = 0 where %2$I <> 0', tg_argv[0], tg_argv[1]);
  return null;
end
$$;

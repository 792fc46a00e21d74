-- Rows per status: removes the rows a DELETE statement removed. Statement-level trigger with transition table
-- `removed`; its arguments name the counter table and its count column.
create or replace function status_counts_deleted() returns trigger
language plpgsql as $$
begin
  execute format(
    'update %1$I c set %2$I = c.%2$I - r.n
       from (select status, count(*) as n from removed group by status) r where c.status = r.status', tg_argv[0], tg_argv[1]);
  return null;
end
$$;

-- search_changes: logs that a searchable item changed (row-level AFTER trigger; migration 0023), in the writing
-- transaction, so that each process's search index reads what changed since it last looked. TG_ARGV[0] is the
-- item's kind, TG_ARGV[1] the column of the row holding the item's id: NEW's on INSERT and UPDATE, OLD's on DELETE,
-- and OLD's too on an UPDATE that changed it.
create or replace function search_item_changed() returns trigger
language plpgsql as $$
declare
  new_id text;
  old_id text;
begin
  if tg_op <> 'DELETE' then
    new_id := to_jsonb(new) ->> tg_argv[1];
    insert into search_changes (kind, id) values (tg_argv[0], new_id);
  end if;
  if tg_op <> 'INSERT' then
    old_id := to_jsonb(old) ->> tg_argv[1];
    if old_id is distinct from new_id then
      insert into search_changes (kind, id) values (tg_argv[0], old_id);
    end if;
  end if;
  return null;
end
$$;

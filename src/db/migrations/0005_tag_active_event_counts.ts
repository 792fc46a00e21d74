import type { Knex } from 'knex';

/**
 * The number of ACTIVE events carrying each tag (`activeEventsCount` of the compatibility tag), kept by
 * triggers so that reading a tag does not count thousands of events. It changes when:
 * - tags are linked to or unlinked from events (statement-level triggers on event_tags, one aggregated
 *   upsert per statement, so bulk inserts stay fast; TRUNCATE resets it);
 * - an event's status moves into or out of ACTIVE (a row trigger that fires only on such a change);
 * - an ACTIVE event is deleted (before its tag links are removed by the cascade).
 * A tag without a row counts 0.
 */
export async function up(knex: Knex): Promise<void> {
  await knex.raw(`
    create table tag_active_event_counts (
      tag_id bigint primary key references tags (id) on delete cascade,
      active_events integer not null default 0
    )`);

  await knex.raw(`
    create function event_tags_count_inserted() returns trigger language plpgsql as $$
    begin
      insert into tag_active_event_counts (tag_id, active_events)
      select a.tag_id, count(*) from added a join events e on e.id = a.event_id where e.status = 'ACTIVE' group by a.tag_id
      on conflict (tag_id) do update set active_events = tag_active_event_counts.active_events + excluded.active_events;
      return null;
    end $$`);
  await knex.raw(`
    create function event_tags_count_deleted() returns trigger language plpgsql as $$
    begin
      update tag_active_event_counts c set active_events = c.active_events - d.n
      from (select r.tag_id, count(*) as n from removed r join events e on e.id = r.event_id where e.status = 'ACTIVE' group by r.tag_id) d
      where c.tag_id = d.tag_id;
      return null;
    end $$`);
  await knex.raw(`
    create function event_tags_count_updated() returns trigger language plpgsql as $$
    begin
      insert into tag_active_event_counts (tag_id, active_events)
      select x.tag_id, sum(x.n) from (
        select a.tag_id, 1 as n from added a join events e on e.id = a.event_id where e.status = 'ACTIVE'
        union all
        select r.tag_id, -1 from removed r join events e on e.id = r.event_id where e.status = 'ACTIVE'
      ) x group by x.tag_id
      on conflict (tag_id) do update set active_events = tag_active_event_counts.active_events + excluded.active_events;
      return null;
    end $$`);
  await knex.raw(`
    create function event_tags_count_truncated() returns trigger language plpgsql as $$
    begin
      update tag_active_event_counts set active_events = 0 where active_events <> 0;
      return null;
    end $$`);
  await knex.raw(`
    create function events_count_status_changed() returns trigger language plpgsql as $$
    begin
      insert into tag_active_event_counts (tag_id, active_events)
      select et.tag_id, case when new.status = 'ACTIVE' then 1 else -1 end from event_tags et where et.event_id = new.id
      on conflict (tag_id) do update set active_events = tag_active_event_counts.active_events + excluded.active_events;
      return null;
    end $$`);
  await knex.raw(`
    create function events_count_deleted() returns trigger language plpgsql as $$
    begin
      update tag_active_event_counts c set active_events = c.active_events - 1
      from event_tags et where et.event_id = old.id and c.tag_id = et.tag_id;
      return old;
    end $$`);

  await knex.raw(`create trigger event_tags_count_inserted after insert on event_tags referencing new table as added
    for each statement execute function event_tags_count_inserted()`);
  await knex.raw(`create trigger event_tags_count_deleted after delete on event_tags referencing old table as removed
    for each statement execute function event_tags_count_deleted()`);
  await knex.raw(`create trigger event_tags_count_updated after update on event_tags referencing old table as removed new table as added
    for each statement execute function event_tags_count_updated()`);
  await knex.raw(`create trigger event_tags_count_truncated after truncate on event_tags
    for each statement execute function event_tags_count_truncated()`);
  await knex.raw(`create trigger events_count_status_changed after update of status on events
    for each row when ((old.status = 'ACTIVE') is distinct from (new.status = 'ACTIVE'))
    execute function events_count_status_changed()`);
  await knex.raw(`create trigger events_count_deleted before delete on events
    for each row when (old.status = 'ACTIVE') execute function events_count_deleted()`);

  await knex.raw(`
    insert into tag_active_event_counts (tag_id, active_events)
    select et.tag_id, count(*) from event_tags et join events e on e.id = et.event_id where e.status = 'ACTIVE' group by et.tag_id`);
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw('drop trigger if exists events_count_deleted on events');
  await knex.raw('drop trigger if exists events_count_status_changed on events');
  for (const t of ['truncated', 'updated', 'deleted', 'inserted']) await knex.raw(`drop trigger if exists event_tags_count_${t} on event_tags`);
  for (const f of ['events_count_deleted', 'events_count_status_changed', 'event_tags_count_truncated', 'event_tags_count_updated', 'event_tags_count_deleted', 'event_tags_count_inserted']) {
    await knex.raw(`drop function if exists ${f}()`);
  }
  await knex.raw('drop table if exists tag_active_event_counts');
}

import type { Knex } from 'knex';
import { sqlFunctions } from '../sql-functions.js';

/**
 * Events per status, kept by triggers like markets per status (migration 0003), so that the total of an event
 * list filtered by nothing but status (`/events/pagination` by default: the ACTIVE events, counted up to the
 * offset scan window) is read from one row instead of counted over the table.
 *
 * Both counters now share one set of trigger functions, `status_counts_*` (src/db/functions), whose arguments
 * name the counter table and its count column: statement-level triggers with transition tables on insert and
 * delete, a row trigger that fires only when a row's status changes, a reset on truncate. Markets' triggers
 * keep their names and move to them; markets' own functions are dropped (their files are gone).
 */
const COUNTERS = [
  { table: 'markets', prefix: 'markets_count', counter: 'market_status_counts', column: 'markets' },
  { table: 'events', prefix: 'events_status_count', counter: 'event_status_counts', column: 'events' },
] as const;

/** Trigger suffix (markets' names from migration 0003), shared function, and how it fires. */
const TRIGGERS = [
  { suffix: 'inserted', fn: 'status_counts_inserted', on: 'after insert on %t referencing new table as added for each statement' },
  { suffix: 'deleted', fn: 'status_counts_deleted', on: 'after delete on %t referencing old table as removed for each statement' },
  { suffix: 'status_changed', fn: 'status_counts_changed', on: 'after update of status on %t for each row when (old.status is distinct from new.status)' },
  { suffix: 'truncated', fn: 'status_counts_truncated', on: 'after truncate on %t for each statement' },
] as const;

const MARKETS_FUNCTIONS = TRIGGERS.map((t) => `markets_count_${t.suffix}`);

export async function up(knex: Knex): Promise<void> {
  await knex.raw('create table event_status_counts (status text primary key, events bigint not null default 0)');
  // The functions exist before their triggers, as their files have them (re-created from the files after the
  // migrations whenever a file changes; a stub only if a later migration has dropped a function and its file).
  const files = sqlFunctions();
  for (const { fn } of TRIGGERS) {
    const file = files.find((f) => f.name === fn);
    await knex.raw(file ? file.sql : `create function ${fn}() returns trigger language plpgsql as $$ begin return null; end $$`);
  }
  for (const name of MARKETS_FUNCTIONS) await knex.raw(`drop trigger ${name} on markets`);
  for (const { table, prefix, counter, column } of COUNTERS) {
    for (const { suffix, fn, on } of TRIGGERS) {
      await knex.raw(`create trigger ${prefix}_${suffix} ${on.replace('%t', table)} execute function ${fn}('${counter}', '${column}')`);
    }
  }
  for (const name of MARKETS_FUNCTIONS) await knex.raw(`drop function ${name}()`);
  await knex('db_functions').whereIn('name', MARKETS_FUNCTIONS).delete();
  await knex.raw('insert into event_status_counts (status, events) select status, count(*) from events group by status');
}

/** Events are no longer counted; markets stay on the shared functions, which count them as migration 0003's did. */
export async function down(knex: Knex): Promise<void> {
  for (const { suffix } of TRIGGERS) await knex.raw(`drop trigger if exists events_status_count_${suffix} on events`);
  await knex.raw('drop table if exists event_status_counts');
}

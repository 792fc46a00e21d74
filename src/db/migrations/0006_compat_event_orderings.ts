import type { Knex } from 'knex';

/**
 * What the compatibility event lists (`/events`, `/events/keyset`, `/events/pagination`, `/events/results`)
 * need on a large catalogue. Every one of them lists either ACTIVE events (`status = 'ACTIVE'`) or the others
 * (`status <> 'ACTIVE'`), and the two sets sit at opposite ends of every time-like key: old ids, creation,
 * start and strike times belong to closed events, recent ones to ACTIVE events; closed markets keep no
 * liquidity. Read in a full (key, id) index, a page of one state first walks past the whole other state.
 * Partial indexes per state, on exactly the predicates the queries use, read a page in index order:
 * - ACTIVE: id, updated_at, start_date, strike_date, liquidity (created_at has (status, created_at, id));
 * - not ACTIVE: the same plus created_at and closed_time (null while ACTIVE: the full index would put every
 *   ACTIVE event before the first closed one in descending order).
 * Also series by lower(frequency): the case-insensitive `recurrence` filter; the expression index gives
 * PostgreSQL statistics on lower(frequency), so it estimates how many series a recurrence matches and reads
 * events in sort order instead of sorting every match.
 */
const ACTIVE = ['id', 'updated_at, id', 'start_date, id', 'strike_date, id', 'liquidity, id'];
const INACTIVE = ['id', 'created_at, id', 'updated_at, id', 'start_date, id', 'strike_date, id', 'liquidity, id', 'closed_time, id'];
const name = (state: string, columns: string) => `events_${state}_${columns.replace(', id', '').replace(/[^a-z_]/g, '')}_id`.replace('_id_id', '_id');

const INDEXES: Array<[string, string]> = [
  ...ACTIVE.map((c): [string, string] => [name('active', c), `events (${c}) where status = 'ACTIVE'`]),
  ...INACTIVE.map((c): [string, string] => [name('inactive', c), `events (${c}) where status <> 'ACTIVE'`]),
  ['series_lower_frequency', 'series (lower(frequency))'],
];

export async function up(knex: Knex): Promise<void> {
  for (const [index, on] of INDEXES) await knex.raw(`create index if not exists ${index} on ${on}`);
}

export async function down(knex: Knex): Promise<void> {
  for (const [index] of INDEXES) await knex.raw(`drop index if exists ${index}`);
}

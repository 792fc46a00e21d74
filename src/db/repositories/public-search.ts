import type { Knex } from 'knex';
import type { Queryable } from '../knex.js';
import type { CatalogueStatus } from '../rows.js';
import { CANDIDATES_PER_RESULT, candidateCtes, EVENTS, PROFILES, QUERY_CTES, TAGS, TYPO, type SearchKind } from './word-search.js';

/**
 * Reads of `/public-search`: events, tags and profiles matched and ranked word by word (word-search.ts), each
 * bucket cut at the page size, and the matching events (the broadest of the three tsqueries, typos included)
 * counted up to COUNT_CAP.
 *
 * The buckets and the count are read by one statement, planned without its values: run it on connections
 * made with `genericPlans` and `indexScansOnly` (src/db/knex.ts; the public search's pool, src/db/pools.ts).
 * Without event filters it is a named statement, planned once per connection: planning it costs more than
 * running it. Filtered searches come in too many shapes to keep one each per connection: they are planned per
 * request.
 */

/** `totalResults` counts matching events up to this many. */
export const COUNT_CAP = 1_000;

export type EventStatusFilter = 'active' | 'not_active' | 'resolved';

export interface EventSearchFilter {
  status?: EventStatusFilter;
  /** Only ACTIVE events (`keep_closed_markets=0`), on top of `status`. */
  activeOnly: boolean;
  /** The event must carry, for each group, at least one of its tag ids. */
  requiredTagGroups: string[][];
  /** The event must carry none of these tag ids. */
  excludedTagIds: string[];
  /** Frequency of the event's series, compared case-insensitively. */
  recurrence?: string;
}

/** What one search reads: each bucket left undefined (false) is not read, and answers empty. */
export interface PublicSearchQuery {
  /** The text as typed (trimmed, cut): the statement splits it into words. */
  text: string;
  /** Items per bucket. */
  limit: number;
  events?: EventSearchFilter;
  /** The tag bucket, leaving out these tag ids. */
  tags?: { excludedTagIds: string[] };
  profiles: boolean;
}

export interface SearchEventRow {
  id: string;
  ticker: string;
  slug: string;
  title: string;
  status: CatalogueStatus;
  series_title: string;
}

export interface SearchTagRow {
  id: string;
  slug: string;
  label: string;
}

export interface SearchProfileRow {
  id: string;
  name: string;
  username: string;
}

export interface PublicSearchRows {
  events: SearchEventRow[];
  /** Matching events, counted up to COUNT_CAP. */
  total: number;
  tags: SearchTagRow[];
  profiles: SearchProfileRow[];
}

const STATUS_CONDITION: Record<EventStatusFilter, string> = {
  active: `e.status = 'ACTIVE'`,
  not_active: `e.status <> 'ACTIVE'`,
  resolved: `e.status = 'RESOLVED'`,
};

const isFiltered = (filter: EventSearchFilter) =>
  filter.status !== undefined || filter.activeOnly || filter.requiredTagGroups.length > 0 || filter.excludedTagIds.length > 0 || filter.recurrence !== undefined;

/** The filters (not the text) as conditions on `events e`, with their bindings. */
function eventFilter(filter: EventSearchFilter): { sql: string; bindings: Record<string, unknown> } {
  const conditions: string[] = [];
  const bindings: Record<string, unknown> = {};
  if (filter.status) conditions.push(STATUS_CONDITION[filter.status]);
  if (filter.activeOnly) conditions.push(STATUS_CONDITION.active);
  filter.requiredTagGroups.forEach((group, i) => {
    conditions.push(`exists (select 1 from event_tags et where et.event_id = e.id and et.tag_id = any(:q_tag_group_${i}::bigint[]))`);
    bindings[`q_tag_group_${i}`] = group;
  });
  if (filter.excludedTagIds.length > 0) {
    conditions.push('not exists (select 1 from event_tags et where et.event_id = e.id and et.tag_id = any(:q_excluded_tags::bigint[]))');
    bindings.q_excluded_tags = filter.excludedTagIds;
  }
  if (filter.recurrence !== undefined) {
    conditions.push('exists (select 1 from series fs where fs.id = e.series_id and lower(fs.frequency) = lower(:q_recurrence))');
    bindings.q_recurrence = filter.recurrence;
  }
  return { sql: conditions.map((condition) => ` and ${condition}`).join(''), bindings };
}

interface Shape {
  events: boolean;
  tags: boolean;
  profiles: boolean;
}

/** The statement of one shape: one row of the count and each bucket as a JSON array in rank order. */
function statement(shape: Shape, filter: string): string {
  const events: SearchKind = { ...EVENTS, where: filter };
  const tags: SearchKind = { ...TAGS, where: ' and t.id <> all(:q_excluded_tag_ids::bigint[])' };
  const ctes = [
    QUERY_CTES,
    ...candidateCtes(
      [
        ...(shape.events ? [{ kind: events, columns: 'e.ticker, e.slug, e.title, e.status, e.series_id' }] : []),
        ...(shape.tags ? [{ kind: tags, columns: 't.slug, t.label' }] : []),
        ...(shape.profiles ? [{ kind: PROFILES, columns: 'u.name, u.username' }] : []),
      ],
      false,
    ),
  ];
  const bucket = (read: boolean, fields: string, from: string) => (read ? `(select coalesce(json_agg(json_build_object(${fields}) order by r.n), '[]') from ${from})` : `'[]'::json`);
  const total = `(select count(*) from (select 1 from events e where e.search_vector @@ ${TYPO}${filter} limit ${COUNT_CAP}) m)::int`;
  return `with ${ctes.join(',\n')}
    select ${shape.events ? total : '0'} as total,
           ${bucket(shape.events, `'id', r.id::text, 'ticker', r.ticker, 'slug', r.slug, 'title', r.title, 'status', r.status, 'series_title', ${SERIES_TITLE}`, 'event_ranked r')} as events,
           ${bucket(shape.tags, `'id', r.id::text, 'slug', r.slug, 'label', r.label`, 'tag_ranked r')} as tags,
           ${bucket(shape.profiles, `'id', r.id::text, 'name', r.name, 'username', r.username`, 'profile_ranked r')} as profiles`;
}

/** Looked up for the events of the page only. */
const SERIES_TITLE = '(select s.title from series s where s.id = r.series_id)';

/** The unfiltered statements, one per shape, built once. */
const unfiltered = new Map<string, { sql: string; name: string }>();

function unfilteredStatement(shape: Shape): { sql: string; name: string } {
  const key = Object.values(shape).map(Number).join('');
  let found = unfiltered.get(key);
  if (!found) {
    found = { sql: statement(shape, ''), name: `dots_public_search_words_${key}` };
    unfiltered.set(key, found);
  }
  return found;
}

/** The statement and bindings of a search (also what bench:catalogue's baseline runs). */
export function searchStatement(query: PublicSearchQuery): { sql: string; bindings: Record<string, unknown>; name: string | undefined } {
  const { text, limit, events, tags, profiles } = query;
  const shape: Shape = { events: events !== undefined, tags: tags !== undefined, profiles };
  const bindings: Record<string, unknown> = { q_text: text, q_limit: limit, q_candidates: CANDIDATES_PER_RESULT * limit };
  if (tags) bindings.q_excluded_tag_ids = tags.excludedTagIds;
  if (events && isFiltered(events)) {
    const filter = eventFilter(events);
    return { sql: statement(shape, filter.sql), bindings: { ...bindings, ...filter.bindings }, name: undefined };
  }
  return { ...unfilteredStatement(shape), bindings };
}

/** The best-ranked matching events, tags and profiles, at most `limit` of each, and how many events match (up to COUNT_CAP). */
export async function search(db: Queryable, query: PublicSearchQuery): Promise<PublicSearchRows> {
  const { sql, bindings, name } = searchStatement(query);
  let read: Knex.Raw<{ rows: PublicSearchRows[] }> = db.raw(sql, bindings);
  if (name) read = read.options({ name });
  // One row, always (a select without FROM).
  return (await read).rows[0]!;
}

/** Which tags each reference names: by id (digits), slug, or label (compared case-insensitively). */
export async function findTagsByReference(db: Queryable, references: string[]): Promise<Array<{ reference: string; id: string }>> {
  if (references.length === 0) return [];
  const result = await db.raw(
    `select r.reference, t.id::text as id
       from unnest(array[${references.map(() => '?').join(', ')}]::text[]) as r(reference)
       join tags t on t.slug = r.reference or lower(t.label) = lower(r.reference)
         or t.id = (case when r.reference ~ '^[0-9]{1,18}$' then r.reference::bigint end)`,
    references,
  );
  return result.rows;
}

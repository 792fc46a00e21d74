import type { Knex } from 'knex';
import type { Queryable } from '../knex.js';
import type { CatalogueStatus } from '../rows.js';

/**
 * Reads of `/public-search`. Text matching is case-insensitive (the database's own `lower()` on both
 * sides). An item matches the search text when it
 *   0 equals it (title, ticker or slug; label or slug; username or name),
 *   1 starts with it,
 *   2 contains it, or, only when no item of the bucket contains it,
 *   3 is similar to it (pg_trgm word similarity, `<%`: the fallback for misspellings).
 * Each bucket is ranked by that class; within a class by title (label, username) and id, class 3 by
 * similarity first. Search text shorter than 3 characters (which has no trigram) matches classes 0 and 1 only.
 *
 * A broad search may match most of the catalogue, so events and profiles are read in bounded steps, each
 * on an index and cut at its size: exact matches, prefix matches in title/ticker (username/name) order,
 * and at most CANDIDATES other matches. Only these are ranked. Events are counted up to COUNT_CAP.
 * Tags are few: they are matched and ranked in one plain query.
 */

/** Other (class 2 and 3) matches read per search before ranking. */
export const CANDIDATES = 100;
/** `totalResults` counts matching events up to this many. */
export const COUNT_CAP = 1_000;

/** The search text in the forms the queries need (built by the domain; bound, never interpolated). */
export interface SearchText {
  /** The text, trimmed (the queries lower-case it). */
  text: string;
  /** LIKE pattern for "contains": `%text%`, with LIKE metacharacters escaped. */
  contains: string;
  /** LIKE pattern for "starts with": `text%`, escaped likewise. */
  prefix: string;
}

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

type Lowered = Record<'text' | 'contains' | 'prefix', Knex.Raw>;

/** The search forms, lower-cased by the database's `lower()`: the function that lower-cases the text searched. */
function lowered(db: Queryable, search: SearchText): Lowered {
  return {
    text: db.raw('lower(?)', [search.text]),
    contains: db.raw('lower(?)', [search.contains]),
    prefix: db.raw('lower(?)', [search.prefix]),
  };
}

/** Trigram matching (classes 2 and 3) needs at least this many characters. */
const TRIGRAM_MIN = 3;
const hasTrigrams = (search: SearchText) => Array.from(search.text).length >= TRIGRAM_MIN;

/**
 * `matches (id, class)`: every item of class 2, then (only if there is none) every item of class 3, or,
 * for short text, every item of classes 0 and 1 (as class 2). MATERIALIZED: planned without the LIMIT
 * its readers put on it, so on the indexes (never a sequential scan that computes a similarity per row),
 * and read lazily, so that a reader stopping after n rows fetches n.
 */
function withMatches(db: Queryable, search: SearchText, contains: Knex.QueryBuilder, similar: Knex.QueryBuilder, short: Knex.QueryBuilder): Knex.QueryBuilder {
  if (!hasTrigrams(search)) return db.queryBuilder().withMaterialized('matches', short.select(db.raw('2 as class')));
  return db
    .queryBuilder()
    .withMaterialized('contained', contains)
    .withMaterialized(
      'matches',
      db.raw('select id, 2 as class from contained union all ?', [similar.select(db.raw('3 as class')).whereNotExists(db('contained').select(db.raw('1')))]),
    );
}

/** The expression the events' trigram index (events_search_trgm) is built on. */
const EVENT_TEXT = `(lower(e.title) || ' ' || lower(e.ticker))`;
/** Byte-order forms of the indexes events_title_c_id and events_ticker_c_id (migration 0004). Tickers are upper-case. */
const EVENT_TITLE_C = `(lower(e.title) collate "C")`;
const EVENT_TICKER_C = `(e.ticker collate "C")`;

/** Events passing the filters (not the text). */
function filteredEvents(db: Queryable, filter: EventSearchFilter): Knex.QueryBuilder {
  const q = db('events as e');
  if (filter.status === 'active') q.where('e.status', 'ACTIVE');
  else if (filter.status === 'not_active') q.whereNot('e.status', 'ACTIVE');
  else if (filter.status === 'resolved') q.where('e.status', 'RESOLVED');
  if (filter.activeOnly) q.where('e.status', 'ACTIVE');
  for (const group of filter.requiredTagGroups) {
    q.whereExists((sub) => sub.select(db.raw('1')).from('event_tags as et').whereRaw('et.event_id = e.id').whereIn('et.tag_id', group));
  }
  if (filter.excludedTagIds.length > 0) {
    q.whereNotExists((sub) => sub.select(db.raw('1')).from('event_tags as et').whereRaw('et.event_id = e.id').whereIn('et.tag_id', filter.excludedTagIds));
  }
  if (filter.recurrence !== undefined) {
    const recurrence = filter.recurrence;
    q.whereExists((sub) => sub.select(db.raw('1')).from('series as fs').whereRaw('fs.id = e.series_id and lower(fs.frequency) = lower(?)', [recurrence]));
  }
  return q;
}

/**
 * The best-ranked matching events, at most `limit`, and how many events match, counted up to COUNT_CAP:
 * one query, reading the matches once. Every row carries the count; no row means no match.
 */
export async function searchEvents(
  db: Queryable,
  search: SearchText,
  filter: EventSearchFilter,
  limit: number,
): Promise<{ events: SearchEventRow[]; total: number }> {
  const l = lowered(db, search);
  const events = () => filteredEvents(db, filter).select('e.id');
  const contains = `(${EVENT_TEXT} like ? or e.slug = ?)`;
  const parts: Knex.QueryBuilder[] = [
    events()
      .select(db.raw('0 as class'))
      .whereRaw(`(${EVENT_TITLE_C} = ? or ${EVENT_TICKER_C} = upper(?) or e.slug = ?)`, [l.text, l.text, l.text])
      .limit(limit),
    events().select(db.raw('1 as class')).whereRaw(`${EVENT_TITLE_C} like ?`, [l.prefix]).orderByRaw(`${EVENT_TITLE_C}, e.id`).limit(limit),
    events().select(db.raw('1 as class')).whereRaw(`${EVENT_TICKER_C} like upper(?)`, [l.prefix]).orderByRaw(`${EVENT_TICKER_C}, e.id`).limit(limit),
    db('matches').select('id', 'class').limit(CANDIDATES),
  ];
  const rows: Array<SearchEventRow & { total: number }> = await withMatches(
    db,
    search,
    events().whereRaw(contains, [l.contains, l.text]),
    events().whereRaw(`? <% ${EVENT_TEXT}`, [l.text]),
    events().whereRaw(`(${EVENT_TITLE_C} like ? or ${EVENT_TICKER_C} like upper(?) or e.slug = ?)`, [l.prefix, l.prefix, l.text]),
  )
    .with('candidates', db.raw(parts.map(() => '?').join(' union all '), parts))
    .from(db('candidates').select('id').min('class as class').groupBy('id').as('c'))
    .join('events as e', 'e.id', 'c.id')
    .join('series as s', 's.id', 'e.series_id')
    .select(
      'e.id',
      'e.ticker',
      'e.slug',
      'e.title',
      'e.status',
      's.title as series_title',
      db.raw('(select count(*) from (select 1 from matches limit ?) m)::int as total', [COUNT_CAP]),
    )
    .orderByRaw(`c.class, case when c.class = 3 then word_similarity(?, ${EVENT_TEXT}) end desc, ${EVENT_TITLE_C}, e.id`, [l.text])
    .limit(limit);
  return { events: rows.map(({ total: _, ...event }) => event), total: rows[0]?.total ?? 0 };
}

/** The best-ranked matching tags (on label or slug), at most `limit`, leaving out `excludedTagIds`. */
export async function searchTags(db: Queryable, search: SearchText, excludedTagIds: string[], limit: number): Promise<SearchTagRow[]> {
  const l = lowered(db, search);
  const tags = () => {
    const q = db('tags as t');
    if (excludedTagIds.length > 0) q.whereNotIn('t.id', excludedTagIds);
    return q;
  };
  const pattern = hasTrigrams(search) ? l.contains : l.prefix;
  const matched = tags().select('t.*').whereRaw('(lower(t.label) like ? or t.slug like ?)', [pattern, pattern]);
  const query = db.queryBuilder().with('matched', matched);
  const similar = hasTrigrams(search)
    ? tags().select('t.*').whereRaw('? <% lower(t.label)', [l.text]).whereNotExists(db('matched').select(db.raw('1')))
    : undefined;
  return query
    .from(similar ? db.raw('(select * from matched union all ?) as t', [similar]) : db.raw('matched as t'))
    .select(db.raw('t.id::text as id'), 't.slug', 't.label')
    .orderByRaw(
      `case when lower(t.label) = ? or t.slug = ? then 0 when lower(t.label) like ? or t.slug like ? then 1 when lower(t.label) like ? or t.slug like ? then 2 else 3 end,
       case when not (lower(t.label) like ? or t.slug like ?) then word_similarity(?, lower(t.label)) end desc, lower(t.label) collate "C", t.id`,
      [l.text, l.text, l.prefix, l.prefix, l.contains, l.contains, l.contains, l.contains, l.text],
    )
    .limit(limit);
}

const USERNAME_C = `(lower(u.username) collate "C")`;
const NAME_C = `(lower(u.name) collate "C")`;

/** The best-ranked matching accounts (on username or name), at most `limit`. Accounts without a username never match. */
export async function searchProfiles(db: Queryable, search: SearchText, limit: number): Promise<SearchProfileRow[]> {
  const l = lowered(db, search);
  const users = () => db('users as u').select('u.id').where('u.username', '<>', '');
  const parts: Knex.QueryBuilder[] = [
    users().select(db.raw('0 as class')).whereRaw(`(${USERNAME_C} = ? or ${NAME_C} = ?)`, [l.text, l.text]).limit(limit),
    users().select(db.raw('1 as class')).whereRaw(`${USERNAME_C} like ?`, [l.prefix]).orderByRaw(USERNAME_C).limit(limit),
    users().select(db.raw('1 as class')).whereRaw(`${NAME_C} like ?`, [l.prefix]).orderByRaw(`${NAME_C}, u.id`).limit(limit),
    db('matches').select('id', 'class').limit(CANDIDATES),
  ];
  return withMatches(
    db,
    search,
    users().whereRaw('(lower(u.username) like ? or lower(u.name) like ?)', [l.contains, l.contains]),
    users().whereRaw('(? <% lower(u.username) or ? <% lower(u.name))', [l.text, l.text]),
    users().whereRaw(`(${USERNAME_C} like ? or ${NAME_C} like ?)`, [l.prefix, l.prefix]),
  )
    .with('candidates', db.raw(parts.map(() => '?').join(' union all '), parts))
    .from(db('candidates').select('id').min('class as class').groupBy('id').as('c'))
    .join('users as u', 'u.id', 'c.id')
    .select(db.raw('u.id::text as id'), 'u.name', 'u.username')
    .orderByRaw(
      `c.class, case when c.class = 3 then greatest(word_similarity(?, lower(u.username)), word_similarity(?, lower(u.name))) end desc, ${USERNAME_C}, u.id`,
      [l.text, l.text],
    )
    .limit(limit);
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

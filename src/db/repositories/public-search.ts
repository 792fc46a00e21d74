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
 *
 * The buckets and the count are read by one statement, planned without its values: run it on connections
 * made with `genericPlans` (src/db/knex.ts; the search pool of src/server.ts). Without event filters it is a
 * named statement, planned once per connection: planning it costs more than running it. Filtered searches
 * come in too many shapes to keep one each per connection: they are planned per request. So every step is
 * written to be served by its index whatever the text: "starts with" is a range of the byte-order btree
 * (its end computed in SQL from the lower-cased text), not a LIKE the planner turns into one only for a
 * pattern it knows.
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

/** What one search reads: each bucket left undefined (false) is not read, and answers empty. */
export interface PublicSearchQuery {
  text: SearchText;
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

/** Trigram matching (classes 2 and 3) needs at least this many characters. */
const TRIGRAM_MIN = 3;

/**
 * CTE `q`: the search forms, lower-cased by the database's `lower()` (the function that lower-cases the text
 * searched), and the ends of the "starts with" ranges; each computed once, read as `(select … from q)`.
 */
function forms(bounded: boolean): string {
  const ends = bounded ? `, ${prefixEnd('lower(:q_text)')} as text_end, ${prefixEnd('upper(lower(:q_text))')} as upper_end` : '';
  return `q as (select lower(:q_text) as text, upper(lower(:q_text)) as upper, lower(:q_contains) as contains, lower(:q_prefix) as prefix${ends})`;
}
const TEXT = '(select text from q)';
const CONTAINS = '(select contains from q)';
const PREFIX = '(select prefix from q)';
/** Tickers are upper-case. */
const UPPER = '(select upper from q)';

/**
 * The least string above every string that starts with `text` (in byte order, `collate "C"`): `text` with
 * trailing U+10FFFF dropped and its last character incremented, past the surrogates, which text cannot hold.
 * Text made only of U+10FFFF has none (nor needs one: every string at or above it starts with it).
 */
function prefixEnd(text: string): string {
  const kept = `rtrim(${text}, chr(1114111))`;
  const last = `ascii(right(${kept}, 1))`;
  return `left(${kept}, -1) || chr(${last} + case ${last} when 55295 then 2049 else 1 end)`;
}

/** `column` (collate "C") starts with the form `text` or `upper` of `q`: a range of its byte-order index. */
function startsWith(column: string, form: 'text' | 'upper', bounded: boolean): string {
  const from = `${column} >= (select ${form} from q)`;
  return bounded ? `(${from} and ${column} < (select ${form}_end from q))` : from;
}

/**
 * `<name>_matches (id, class)`: every item of class 2, then (only if there is none) every item of class 3, or,
 * for short text, every item of classes 0 and 1 (as class 2). MATERIALIZED: planned without the LIMIT
 * its readers put on it, so on the indexes (never a sequential scan that computes a similarity per row),
 * and read lazily, so that a reader stopping after n rows fetches n.
 */
function matchesOf(name: string, trigrams: boolean, contains: string, similar: string, short: string): string[] {
  if (!trigrams) return [`${name}_matches as materialized (select id, 2 as class from (${short}) m)`];
  return [
    `${name}_contained as materialized (${contains})`,
    `${name}_matches as materialized (
       select id, 2 as class from ${name}_contained
       union all
       select id, 3 from (${similar}) m where not exists (select 1 from ${name}_contained))`,
  ];
}

/** The expression the events' trigram index (events_search_trgm) is built on. */
const EVENT_TEXT = `(lower(e.title) || ' ' || lower(e.ticker))`;
/** Byte-order forms of the indexes events_title_c_id and events_ticker_c_id (migration 0004). */
const EVENT_TITLE_C = `(lower(e.title) collate "C")`;
const EVENT_TICKER_C = `(e.ticker collate "C")`;

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

/**
 * The events bucket: CTEs `event_matches` (counted up to COUNT_CAP) and `ranked_events` (at most `:q_limit`,
 * numbered `n` in rank order).
 */
function eventsPart(trigrams: boolean, bounded: boolean, filter: string): string[] {
  const events = (columns: string, where: string) => `select ${columns} from events e where ${where}${filter}`;
  const titleStarts = startsWith(EVENT_TITLE_C, 'text', bounded);
  const tickerStarts = startsWith(EVENT_TICKER_C, 'upper', bounded);
  return [
    ...matchesOf(
      'event',
      trigrams,
      events('e.id', `(${EVENT_TEXT} like ${CONTAINS} or e.slug = ${TEXT})`),
      events('e.id', `${TEXT} <% ${EVENT_TEXT}`),
      events('e.id', `(${titleStarts} or ${tickerStarts} or e.slug = ${TEXT})`),
    ),
    `event_candidates as (
       (${events('e.id, 0 as class', `(${EVENT_TITLE_C} = ${TEXT} or ${EVENT_TICKER_C} = ${UPPER} or e.slug = ${TEXT})`)} limit :q_limit)
       union all (${events('e.id, 1', titleStarts)} order by ${EVENT_TITLE_C}, e.id limit :q_limit)
       union all (${events('e.id, 1', tickerStarts)} order by ${EVENT_TICKER_C}, e.id limit :q_limit)
       union all (select id, class from event_matches limit ${CANDIDATES}))`,
    `ranked_events as (
       select e.id, e.ticker, e.slug, e.title, e.status, e.series_id,
              row_number() over (order by c.class, case when c.class = 3 then word_similarity(${TEXT}, ${EVENT_TEXT}) end desc, ${EVENT_TITLE_C}, e.id) as n
         from (select id, min(class) as class from event_candidates group by id) c
         join events e on e.id = c.id
        order by n
        limit :q_limit)`,
  ];
}

/** The tag bucket: CTE `ranked_tags` (at most `:q_limit`, numbered `n` in rank order), leaving out `:q_excluded_tag_ids`. */
function tagsPart(trigrams: boolean): string[] {
  const tags = (where: string) => `select t.* from tags t where ${where} and t.id <> all(:q_excluded_tag_ids::bigint[])`;
  const pattern = trigrams ? CONTAINS : PREFIX;
  const rank = `case when lower(t.label) = ${TEXT} or t.slug = ${TEXT} then 0
                     when lower(t.label) like ${PREFIX} or t.slug like ${PREFIX} then 1
                     when lower(t.label) like ${CONTAINS} or t.slug like ${CONTAINS} then 2 else 3 end,
                case when not (lower(t.label) like ${CONTAINS} or t.slug like ${CONTAINS}) then word_similarity(${TEXT}, lower(t.label)) end desc,
                lower(t.label) collate "C", t.id`;
  const matched = tags(`(lower(t.label) like ${pattern} or t.slug like ${pattern})`);
  const similar = trigrams ? ` union all ${tags(`${TEXT} <% lower(t.label)`)} and not exists (select 1 from matched_tags)` : '';
  return [
    `matched_tags as (${matched})`,
    `ranked_tags as (
       select t.id, t.slug, t.label, row_number() over (order by ${rank}) as n
         from (select * from matched_tags${similar}) t
        order by n
        limit :q_limit)`,
  ];
}

const USERNAME_C = `(lower(u.username) collate "C")`;
const NAME_C = `(lower(u.name) collate "C")`;

/** The profile bucket: CTE `ranked_profiles` (at most `:q_limit`, numbered `n`). Accounts without a username never match. */
function profilesPart(trigrams: boolean, bounded: boolean): string[] {
  const users = (columns: string, where: string) => `select ${columns} from users u where u.username <> '' and ${where}`;
  const usernameStarts = startsWith(USERNAME_C, 'text', bounded);
  const nameStarts = startsWith(NAME_C, 'text', bounded);
  return [
    ...matchesOf(
      'user',
      trigrams,
      users('u.id', `(lower(u.username) like ${CONTAINS} or lower(u.name) like ${CONTAINS})`),
      users('u.id', `(${TEXT} <% lower(u.username) or ${TEXT} <% lower(u.name))`),
      users('u.id', `(${usernameStarts} or ${nameStarts})`),
    ),
    `user_candidates as (
       (${users('u.id, 0 as class', `(${USERNAME_C} = ${TEXT} or ${NAME_C} = ${TEXT})`)} limit :q_limit)
       union all (${users('u.id, 1', usernameStarts)} order by ${USERNAME_C} limit :q_limit)
       union all (${users('u.id, 1', nameStarts)} order by ${NAME_C}, u.id limit :q_limit)
       union all (select id, class from user_matches limit ${CANDIDATES}))`,
    `ranked_profiles as (
       select u.id, u.name, u.username,
              row_number() over (
                order by c.class,
                         case when c.class = 3 then greatest(word_similarity(${TEXT}, lower(u.username)), word_similarity(${TEXT}, lower(u.name))) end desc,
                         ${USERNAME_C}, u.id) as n
         from (select id, min(class) as class from user_candidates group by id) c
         join users u on u.id = c.id
        order by n
        limit :q_limit)`,
  ];
}

interface Shape {
  trigrams: boolean;
  bounded: boolean;
  events: boolean;
  tags: boolean;
  profiles: boolean;
}

/** Looked up for the events of the page only (a join could be planned as a scan of every series). */
const SERIES_TITLE = '(select s.title from series s where s.id = r.series_id)';

/** The statement of one shape: one row of the count and each bucket as a JSON array in rank order. */
function statement(shape: Shape, filter: string): string {
  const ctes = [
    forms(shape.bounded),
    ...(shape.events ? eventsPart(shape.trigrams, shape.bounded, filter) : []),
    ...(shape.tags ? tagsPart(shape.trigrams) : []),
    ...(shape.profiles ? profilesPart(shape.trigrams, shape.bounded) : []),
  ];
  const bucket = (read: boolean, fields: string, from: string) => (read ? `(select coalesce(json_agg(json_build_object(${fields}) order by r.n), '[]') from ${from})` : `'[]'::json`);
  return `with ${ctes.join(',\n')}
    select ${shape.events ? `(select count(*) from (select 1 from event_matches limit ${COUNT_CAP}) m)::int` : '0'} as total,
           ${bucket(shape.events, `'id', r.id::text, 'ticker', r.ticker, 'slug', r.slug, 'title', r.title, 'status', r.status, 'series_title', ${SERIES_TITLE}`, 'ranked_events r')} as events,
           ${bucket(shape.tags, `'id', r.id::text, 'slug', r.slug, 'label', r.label`, 'ranked_tags r')} as tags,
           ${bucket(shape.profiles, `'id', r.id::text, 'name', r.name, 'username', r.username`, 'ranked_profiles r')} as profiles`;
}

/** The unfiltered statements, one per shape, built once. */
const unfiltered = new Map<string, { sql: string; name: string }>();

function unfilteredStatement(shape: Shape): { sql: string; name: string } {
  const key = Object.values(shape).map(Number).join('');
  let found = unfiltered.get(key);
  if (!found) {
    found = { sql: statement(shape, ''), name: `dots_public_search_${key}` };
    unfiltered.set(key, found);
  }
  return found;
}

/** The best-ranked matching events, tags and profiles, at most `limit` of each, and how many events match (up to COUNT_CAP). */
export async function search(db: Queryable, query: PublicSearchQuery): Promise<PublicSearchRows> {
  const { text, limit, events, tags, profiles } = query;
  const shape: Shape = {
    trigrams: Array.from(text.text).length >= TRIGRAM_MIN,
    bounded: !/^\u{10FFFF}+$/u.test(text.text),
    events: events !== undefined,
    tags: tags !== undefined,
    profiles,
  };
  const bindings: Record<string, unknown> = { q_text: text.text, q_contains: text.contains, q_prefix: text.prefix, q_limit: limit };
  if (tags) bindings.q_excluded_tag_ids = tags.excludedTagIds;
  let read: Knex.Raw<{ rows: PublicSearchRows[] }>;
  if (events && isFiltered(events)) {
    const filter = eventFilter(events);
    read = db.raw(statement(shape, filter.sql), { ...bindings, ...filter.bindings });
  } else {
    const { sql, name } = unfilteredStatement(shape);
    read = db.raw(sql, bindings).options({ name });
  }
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

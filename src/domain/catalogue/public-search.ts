import type { Db } from '../../db/knex.js';
import * as repo from '../../db/repositories/public-search.js';
import { hasSearchChanges } from '../../db/repositories/search-index.js';
import type { KindCandidates } from '../../db/repositories/search.js';
import { invalid } from '../errors.js';
import { firstOf, listValues } from '../pagination/lists.js';
import { canName, searchText } from './compat-refs.js';
import type { SearchItem } from './indexed-items.js';
import type { LiveSearchIndex } from './live-search-index.js';
import type { CompatTagRef, PublicSearchEventHit, PublicSearchProfileHit } from './read-models.js';
import { CANDIDATES_PER_RESULT, listOf } from './search.js';
import { type SearchIndex, withinFirst } from './search-index.js';

export const PUBLIC_SEARCH_DEFAULT_LIMIT = 10;
export const PUBLIC_SEARCH_MAX_LIMIT = 50;
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

const STATUS_TEST: Record<EventStatusFilter, (status: string | null) => boolean> = {
  active: (status) => status === 'ACTIVE',
  not_active: (status) => status !== 'ACTIVE',
  resolved: (status) => status === 'RESOLVED',
};

/**
 * The filters (not the text) as a test of an indexed event; none when nothing is filtered. The test runs for
 * every event a search visits (up to the count's cap), so it is built once per search, from sets, and
 * allocates nothing per event.
 */
function eventTest(index: SearchIndex, filter: EventSearchFilter): ((event: SearchItem) => boolean) | undefined {
  const { status, activeOnly, requiredTagGroups, excludedTagIds } = filter;
  const recurrence = filter.recurrence?.toLowerCase();
  if (status === undefined && !activeOnly && requiredTagGroups.length === 0 && excludedTagIds.length === 0 && recurrence === undefined) return undefined;
  const statusTest = status === undefined ? undefined : STATUS_TEST[status];
  const required = requiredTagGroups.map((group) => new Set(group));
  const excluded = new Set(excludedTagIds);
  return (event) => {
    if (statusTest && !statusTest(event.status)) return false;
    if (activeOnly && event.status !== 'ACTIVE') return false;
    for (const group of required) if (!carriesAny(event, group)) return false;
    if (excluded.size > 0 && carriesAny(event, excluded)) return false;
    return recurrence === undefined || (event.seriesId !== null && index.get('series', event.seriesId)?.frequency === recurrence);
  };
}

function carriesAny(event: SearchItem, tagIds: ReadonlySet<string>): boolean {
  for (const id of event.tagIds) if (tagIds.has(id)) return true;
  return false;
}

/** `events_status` values and the event states they keep. */
const EVENT_STATUSES: Record<string, EventStatusFilter> = {
  active: 'active',
  open: 'active',
  live: 'active',
  closed: 'not_active',
  ended: 'not_active',
  resolved: 'resolved',
};

/** The query of `GET /public-search`, as validated; camelCase aliases beside their snake_case spellings. */
export interface PublicSearchParams {
  q: string;
  limit_per_type?: number;
  limitPerType?: number;
  page?: number;
  events_status?: string;
  eventsStatus?: string;
  events_tag?: string[];
  eventsTag?: string[];
  keep_closed_markets?: number;
  keepClosedMarkets?: number;
  search_tags?: boolean;
  searchTags?: boolean;
  search_profiles?: boolean;
  searchProfiles?: boolean;
  recurrence?: string;
  exclude_tag_id?: string[];
  excludeTagId?: string[];
  cache?: boolean;
  optimized?: boolean;
  sort?: string;
  ascending?: boolean;
}

export interface PublicSearchResult {
  events: PublicSearchEventHit[];
  tags: CompatTagRef[];
  profiles: PublicSearchProfileHit[];
  /** Events matching the query and filters (all pages). */
  totalResults: number;
  hasMore: boolean;
}

const EMPTY: PublicSearchResult = { events: [], tags: [], profiles: [], totalResults: 0, hasMore: false };

/** `/public-search`: events, tags and trader profiles matching a text word by word, each bucket ranked by relevance. Only page 1 has results. */
export class PublicSearchService {
  constructor(
    private readonly db: Db,
    private readonly index: LiveSearchIndex,
  ) {}

  async search(params: PublicSearchParams): Promise<PublicSearchResult> {
    const statusName = firstOf(params.events_status, params.eventsStatus);
    const status = statusName === undefined ? undefined : EVENT_STATUSES[statusName];
    if (statusName !== undefined && status === undefined) {
      throw invalid(`events_status must be one of ${Object.keys(EVENT_STATUSES).join(', ')}`, [{ location: 'query', path: 'events_status', message: 'unknown status' }]);
    }
    const text = searchText(params.q);
    if (!text) return EMPTY;
    const limit = Math.min(firstOf(params.limit_per_type, params.limitPerType) ?? PUBLIC_SEARCH_DEFAULT_LIMIT, PUBLIC_SEARCH_MAX_LIMIT);
    const firstPage = (params.page ?? 1) <= 1;
    const withTags = firstPage && (firstOf(params.search_tags, params.searchTags) ?? true);
    const withProfiles = firstPage && (firstOf(params.search_profiles, params.searchProfiles) ?? true);

    // Tag references (ids, slugs or labels) of both tag filters, resolved in one look-up.
    const required = listValues(params.events_tag, params.eventsTag);
    const excluded = listValues(params.exclude_tag_id, params.excludeTagId);
    const resolved = await repo.findTagsByReference(this.db, [...new Set([...required, ...excluded])].filter(canName));
    const named = (reference: string) => resolved.filter((r) => r.reference === reference).map((r) => r.id);
    const filter: EventSearchFilter = {
      status,
      activeOnly: firstOf(params.keep_closed_markets, params.keepClosedMarkets) === 0,
      requiredTagGroups: required.map(named),
      excludedTagIds: [...new Set(excluded.flatMap(named))],
      // An empty recurrence (`?recurrence=`) filters nothing.
      recurrence: params.recurrence === '' ? undefined : params.recurrence,
    };
    // A required tag that names nothing, or a recurrence that cannot be stored text, leaves no event.
    const noEvents = filter.requiredTagGroups.some((group) => group.length === 0) || (filter.recurrence !== undefined && !canName(filter.recurrence));

    const excludedTags = new Set(filter.excludedTagIds);
    const none: KindCandidates = { ids: [], tiers: [], words: [] };
    const found = await this.index.read(async (index, since) => {
      const query = index.query(text);
      const candidates = CANDIDATES_PER_RESULT * limit;
      // Events are read unless a filter leaves none; `filter` is undefined when nothing is filtered.
      const events = noEvents ? undefined : { filter: eventTest(index, filter) };
      const lists = {
        events: events ? listOf(withinFirst(index.best(query, 'event', candidates, { ...events, widenBelow: limit }), limit)) : none,
        tags: withTags ? listOf(withinFirst(index.best(query, 'tag', candidates, { filter: (tag) => !excludedTags.has(tag.id), widenBelow: limit }), limit)) : none,
        profiles: withProfiles ? listOf(withinFirst(index.best(query, 'profile', candidates, { widenBelow: limit }), limit)) : none,
      };
      const total = events ? index.count(query, 'event', COUNT_CAP, events.filter) : 0;
      // Nothing to read when nothing matched.
      if (Object.values(lists).every((list) => list.ids.length === 0)) return { changed: await hasSearchChanges(this.db, since), value: { events: [], tags: [], profiles: [], total } };
      const { changed, ...rows } = await repo.readPublicSearchHits(this.db, lists, limit, since);
      return { changed, value: { ...rows, total } };
    });
    const total = found.total;
    // Pages after the first are empty; their count is still that of all matching events.
    const events = firstPage ? found.events : [];
    return { events, tags: found.tags, profiles: found.profiles, totalResults: total, hasMore: firstPage && total > events.length };
  }
}

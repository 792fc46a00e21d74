import type { Db } from '../../db/knex.js';
import * as repo from '../../db/repositories/public-search.js';
import type { EventSearchFilter, EventStatusFilter } from '../../db/repositories/public-search.js';
import { invalid } from '../errors.js';
import { firstOf, listValues } from '../pagination/lists.js';
import { canName, searchText } from './compat-refs.js';
import type { CompatTagRef, PublicSearchEventHit, PublicSearchProfileHit } from './read-models.js';

export const PUBLIC_SEARCH_DEFAULT_LIMIT = 10;
export const PUBLIC_SEARCH_MAX_LIMIT = 50;

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
  constructor(private readonly db: Db) {}

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

    const found = await repo.search(this.db, {
      text,
      limit,
      events: noEvents ? undefined : filter,
      tags: withTags ? { excludedTagIds: filter.excludedTagIds } : undefined,
      profiles: withProfiles,
    });
    // Pages after the first are empty; their count is still that of all matching events.
    const events = firstPage ? found.events : [];
    return { events, tags: found.tags, profiles: found.profiles, totalResults: found.total, hasMore: firstPage && found.total > events.length };
  }
}

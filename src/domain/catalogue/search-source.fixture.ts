import type { SearchKind, SearchSource } from './indexed-items.js';

/** A search item for the search index's unit tests: active when it has a status, in no series, without tags. */
export const searchSource = (kind: SearchKind, id: string, text: string, extra: Partial<SearchSource> = {}): SearchSource => ({
  kind,
  id,
  text,
  exactLower: [],
  exactUpper: [],
  status: kind === 'event' || kind === 'market' ? 'ACTIVE' : null,
  seriesId: null,
  tagIds: [],
  frequency: null,
  ...extra,
});

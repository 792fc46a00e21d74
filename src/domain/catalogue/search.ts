import type { Db } from '../../db/knex.js';
import * as search from '../../db/repositories/search.js';
import { hasSearchChanges } from '../../db/repositories/search-index.js';
import type { KindCandidates } from '../../db/repositories/search.js';
import type { SearchKind } from '../../db/tables.js';
import type { LiveSearchIndex } from './live-search-index.js';
import { type SearchCandidate, type SearchIndex, type SearchQuery, withinFirst } from './search-index.js';
import type { SearchHit } from './read-models.js';

export const SEARCH_DEFAULT_LIMIT = 12;
/** Search text is cut to this many characters (after trimming): longer text is searched by its start. */
export const SEARCH_TEXT_MAX = 100;
/** Shorter text (after trimming) finds nothing. */
export const SEARCH_TEXT_MIN = 2;

const WORD_CHARACTER = /[\p{L}\p{N}]/u;

/** The text as searched: NUL removed, trimmed, cut to its first 100 characters (code points), trimmed again. */
export function searchedText(q: string): string {
  return Array.from(q.replace(/\0/g, '').trim()).slice(0, SEARCH_TEXT_MAX).join('').trim();
}

/** Whether the text has a word to match: text without any letter or digit finds nothing. */
export const hasWords = (text: string): boolean => WORD_CHARACTER.test(text);

/**
 * Items of each kind chosen by the word index per item of the page: the final order, by volume within equal
 * rank, words and activity, is among these.
 */
export const CANDIDATES_PER_RESULT = 2;

const KINDS: readonly SearchKind[] = ['series', 'event', 'market', 'tag', 'profile'];

/** The native search: one ranked list across markets, events, series, tags and profiles. */
export class CatalogueSearchService {
  constructor(
    private readonly db: Db,
    private readonly index: LiveSearchIndex,
  ) {}

  async search(params: { q: string; limit?: number }): Promise<{ query: string; results: SearchHit[] }> {
    const query = searchedText(params.q);
    const limit = params.limit ?? SEARCH_DEFAULT_LIMIT;
    if (Array.from(query).length < SEARCH_TEXT_MIN || !hasWords(query)) return { query, results: [] };
    const results = await this.index.read(async (index, since) => {
      const candidates = searchCandidates(index, index.query(query), limit);
      if (KINDS.every((kind) => candidates[kind].ids.length === 0)) return { changed: await hasSearchChanges(this.db, since), value: [] };
      const { changed, hits } = await search.readSearchHits(this.db, candidates, limit, since);
      return { changed, value: hits };
    });
    return { query, results };
  }
}

/** The candidates of each kind for a page of `limit` items. */
export function searchCandidates(index: SearchIndex, query: SearchQuery, limit: number): Record<SearchKind, KindCandidates> {
  // Prefix and typo matches rank below every whole match: looked for only when the whole matches of all
  // kinds together leave room on the page.
  const perKind = CANDIDATES_PER_RESULT * limit;
  const whole = KINDS.map((kind) => index.whole(query, kind, perKind));
  let best = whole.flat();
  if (best.length < limit) best = KINDS.flatMap((kind, k) => index.widen(query, kind, perKind, whole[k]!, perKind));
  const kept = withinFirst(best, limit);
  return Object.fromEntries(KINDS.map((kind) => [kind, listOf(kept.filter((c) => c.item.kind === kind))])) as Record<SearchKind, KindCandidates>;
}

/** Candidates as the database reads them. */
export const listOf = (candidates: readonly SearchCandidate[]): KindCandidates => ({
  ids: candidates.map((c) => c.item.id),
  tiers: candidates.map((c) => c.tier),
  words: candidates.map((c) => c.item.words.length),
});

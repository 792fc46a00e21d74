import type { Db } from '../../db/knex.js';
import * as search from '../../db/repositories/search.js';
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

/** The native search: one ranked list across markets, events, series, tags and profiles. */
export class CatalogueSearchService {
  constructor(private readonly db: Db) {}

  async search(params: { q: string; limit?: number }): Promise<{ query: string; results: SearchHit[] }> {
    const query = searchedText(params.q);
    const limit = params.limit ?? SEARCH_DEFAULT_LIMIT;
    if (Array.from(query).length < SEARCH_TEXT_MIN || !hasWords(query)) return { query, results: [] };
    return { query, results: await search.search(this.db, query, limit) };
  }
}

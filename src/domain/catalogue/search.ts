import type { Db } from '../../db/knex.js';
import * as search from '../../db/repositories/search.js';
import type { SearchRow, SearchTerms } from '../../db/repositories/search.js';

export const SEARCH_DEFAULT_LIMIT = 12;
/** Search text is cut to this many characters (after trimming): longer text is searched by its start. */
export const SEARCH_TEXT_MAX = 100;
/** Shorter text (after trimming) finds nothing (specification 7, 8). */
export const SEARCH_TEXT_MIN = 2;

/** A run of three letters or digits: the least a trigram index needs to serve `like '%text%'`. */
const TRIGRAM_RUN = /[\p{L}\p{N}]{3}/u;
const WORD_CHARACTER = /[\p{L}\p{N}]/u;

const escapeLike = (text: string) => text.replace(/[\\%_]/g, '\\$&');

/** The text as searched: NUL removed, trimmed, cut to its first 100 characters (code points), trimmed again. */
export function searchedText(q: string): string {
  return Array.from(q.replace(/\0/g, '').trim()).slice(0, SEARCH_TEXT_MAX).join('').trim();
}

/**
 * The least string above every string that starts with `text`, in code point order (the order of
 * `collate "C"` on UTF-8): `text` with its last code point incremented (trailing U+10FFFF dropped first,
 * surrogates skipped). `text` must have a code point below U+10FFFF.
 */
export function prefixEnd(text: string): string {
  const points = Array.from(text, (c) => c.codePointAt(0)!);
  while (points.at(-1) === 0x10ffff) points.pop();
  const last = points.pop();
  if (last === undefined) throw new Error('prefixEnd: no code point below U+10FFFF');
  points.push(last + 1 === 0xd800 ? 0xe000 : last + 1);
  return String.fromCodePoint(...points);
}

/**
 * The forms of the text the query binds, or undefined when nothing can match: text with no letter or digit
 * has no trigram and equals no ticker, slug or username worth finding, and would make a trigram index
 * scan everything.
 */
export function searchTerms(text: string): SearchTerms | undefined {
  if (!WORD_CHARACTER.test(text)) return undefined;
  const lower = text.toLowerCase();
  const upper = lower.toUpperCase();
  return {
    text: lower,
    upper,
    prefix: `${escapeLike(lower)}%`,
    upperPrefix: `${escapeLike(upper)}%`,
    prefixEnd: prefixEnd(lower),
    upperPrefixEnd: prefixEnd(upper),
    contains: TRIGRAM_RUN.test(lower) ? `%${escapeLike(lower)}%` : undefined,
  };
}

/** The native search (specification 4.2 "Search", 2.10): one ranked list across markets, events, series, tags and profiles. */
export class CatalogueSearchService {
  constructor(private readonly db: Db) {}

  async search(params: { q: string; limit?: number }): Promise<{ query: string; results: SearchRow[] }> {
    const query = searchedText(params.q);
    const limit = params.limit ?? SEARCH_DEFAULT_LIMIT;
    const terms = Array.from(query).length >= SEARCH_TEXT_MIN ? searchTerms(query) : undefined;
    if (!terms) return { query, results: [] };
    // Exact and prefix matches rank above every other match: the second step only fills what they leave.
    const first = await search.searchByPrefix(this.db, terms, limit, limit);
    if (first.length >= limit) return { query, results: first };
    // Up to `limit - 1` of the candidates of each way of matching may be exact or prefix matches (already
    // found above): twice the limit still leaves enough of the others.
    return { query, results: [...first, ...(await search.searchBySimilarity(this.db, terms, limit - first.length, 2 * limit))] };
  }
}

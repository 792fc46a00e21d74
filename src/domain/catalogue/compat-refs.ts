/**
 * How compatibility endpoints read the references clients send (ids, tickers, slugs, labels, search text)
 * before they reach a query: pure functions, no SQL.
 */

/** Ids are bigint identities: only 1 to 18 digits can name one (anything else would not even be a bigint). */
const ID = /^\d{1,18}$/;

export const isId = (value: string): boolean => ID.test(value);

/** Stored text never holds NUL (PostgreSQL refuses it), so a value holding one names nothing. */
export const canName = (value: string): boolean => !value.includes('\0');

/** References split into those that may be ids and all of them as keys (tickers, slugs, labels), unusable ones dropped. */
export function splitReferences(values: readonly string[]): { ids: string[]; keys: string[] } {
  const usable = values.filter(canName);
  return { ids: usable.filter(isId), keys: usable };
}

/** Search text is cut to this many characters (after trimming): longer text is searched by its start. */
export const SEARCH_TEXT_MAX = 100;

/**
 * The search text as the queries take it: trimmed, cut, without NUL; undefined when it has no letter or digit
 * (no word to match). Not lower-cased or split here: the statement does both with the database's own
 * functions, as it does to the text it searches.
 */
export function searchText(q: string): string | undefined {
  const text = Array.from(q.replace(/\0/g, '').trim()).slice(0, SEARCH_TEXT_MAX).join('').trim();
  return /[\p{L}\p{N}]/u.test(text) ? text : undefined;
}

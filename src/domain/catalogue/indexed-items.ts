import { distance } from 'fastest-levenshtein';
import type { SearchItemRecord } from '../../db/repositories/search-index.js';
import type { SearchKind } from '../../db/tables.js';
import { clearBit, Ordinals, withBit } from './item-sets.js';

/**
 * The search index's upkeep: every searchable item of the catalogue as words, added, replaced and removed
 * one by one (`put`, `remove`) as `LiveSearchIndex` (live-search-index.ts) reads the catalogue's changes.
 * Query evaluation reads these structures in search-index.ts.
 *
 * Words. An item's text is its fields (series: title, ticker, slug; event: title, ticker, slug, then its
 * series' fields; market: title, ticker, then its event's; tag: label, slug; profile: username, name), as the
 * database keeps them in `search_text` (fields separated by ` | `), already split into words the way
 * `wordsOf` (search-index.ts) splits a query.
 *
 * The structures (word entries with their per-kind lists and bitmaps, the sorted words, trigrams, exact keys,
 * ordinals, kept prefixes and corrections) change together on every `put` and `remove`, so they are kept
 * here, in one class; each word's items are kept per kind in rank order (fewer words, active, id).
 */

export type { SearchKind };

/** An item as the database gives it: its searchable text (fields separated by ` | `), exact keys, status, series, tags, frequency. */
export type SearchSource = SearchItemRecord;

export interface SearchItem {
  kind: SearchKind;
  id: string;
  /** Its words in order, with FIELD_BREAK between fields. */
  text: Array<WordEntry | typeof FIELD_BREAK>;
  /** Its distinct words. */
  words: WordEntry[];
  /** Their ids (small integers, stored inline): what a query checks. */
  wordIds: number[];
  active: boolean;
  /** Fewer distinct words first, then active: the order within a tier, before the id. */
  order: number;
  /** The last scan that visited the item (SearchIndex.scan). */
  scan: number;
  /** Its bit in its kind's bitmaps (item-sets.ts), while it is in the index. */
  ordinal: number;
  status: string | null;
  seriesId: string | null;
  tagIds: readonly string[];
  frequency: string | null;
  exactLower: string[];
  exactUpper: string[];
}

/** Separates the fields of an item's text. */
export const FIELD_BREAK = null;
const NO_TAGS: readonly string[] = [];

/** A word of the index: the items holding it, and what the query being evaluated makes of it. */
export interface WordEntry {
  /** A small integer, reused once the word is gone: its place in the marks (SearchIndex.mark). */
  id: number;
  word: string;
  /** Items holding the word, per kind, in compareItems order. */
  byKind: Map<SearchKind, SearchItem[]>;
  /** The same items as bitmaps, for the kinds a count asked for (SearchIndex.bitmapOf), then kept up to date here. */
  bitmaps: Map<SearchKind, Int32Array> | undefined;
  count: number;
}

const PREFIX_WORDS = 20;
const TYPO_WORDS = 8;
const TYPO_MIN_LENGTH = 4;
const TYPO_TWO_EDITS_FROM = 7;
/** Query words whose prefixes and corrections are kept (see prefixesOf, typosOf), at most, each. */
const WORD_LISTS_KEPT = 10_000;

const lengthOf = (word: string) => {
  let n = 0;
  for (const _ of word) n++;
  return n;
};

/** Trigrams as pg_trgm makes them: the word padded with two spaces before and one after. */
export function trigramsOf(word: string): string[] {
  const chars = Array.from(`  ${word} `);
  const found = new Set<string>();
  for (let i = 0; i + 3 <= chars.length; i++) found.add(chars[i]! + chars[i + 1]! + chars[i + 2]!);
  return [...found];
}

/** Rank order within a tier: fewer distinct words, active first, then id (shorter first: numeric order for integer ids). */
export function compareItems(a: SearchItem, b: SearchItem): number {
  return a.order - b.order || a.id.length - b.id.length || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0);
}

/** Where `item` goes in `list` (kept in compareItems order), or where it is. */
function positionOf(list: SearchItem[], item: SearchItem): number {
  let low = 0;
  let high = list.length;
  while (low < high) {
    const middle = (low + high) >>> 1;
    if (compareItems(list[middle]!, item) < 0) low = middle + 1;
    else high = middle;
  }
  return low;
}

export class IndexedItems {
  private readonly items = new Map<string, SearchItem>();
  protected readonly entries = new Map<string, WordEntry>();
  /** Every word of the index in code point order (for prefixes): made at the first query, then kept. */
  private sorted: string[] | undefined;
  private readonly trigrams = new Map<string, Set<string>>();
  /** Each query word's prefixes and corrections, as the words of the index are: forgotten whenever a word comes or goes. */
  private readonly prefixes = new Map<string, string[]>();
  private readonly typos = new Map<string, string[]>();
  /** Items by their exact keys: one item, or several. */
  private readonly exactLower = new Map<string, SearchItem | SearchItem[]>();
  private readonly exactUpper = new Map<string, SearchItem | SearchItem[]>();
  private readonly ordinals = new Map<SearchKind, Ordinals<SearchItem>>();
  /** Ids of words gone, to reuse. */
  private readonly freeIds: number[] = [];

  /** An index of these items, built at once. */
  static of<T extends IndexedItems>(this: new () => T, sources: Iterable<SearchSource>): T {
    const index = new this();
    for (const source of sources) index.add(index.itemOf(source), false);
    for (const entry of index.entries.values()) for (const list of entry.byKind.values()) list.sort(compareItems);
    return index;
  }

  /** How many word ids have been given out: every word's id is below it. */
  protected get wordIds(): number {
    return this.entries.size + this.freeIds.length;
  }

  get size(): number {
    return this.items.size;
  }

  get(kind: SearchKind, id: string): SearchItem | undefined {
    return this.items.get(`${kind}:${id}`);
  }

  /** Adds an item, or replaces the one of its kind and id. */
  put(source: SearchSource): void {
    this.remove(source.kind, source.id);
    this.add(this.itemOf(source), true);
  }

  remove(kind: SearchKind, id: string): void {
    const item = this.items.get(`${kind}:${id}`);
    if (!item) return;
    this.items.delete(`${kind}:${id}`);
    for (const entry of item.words) {
      const list = entry.byKind.get(kind)!;
      list.splice(positionOf(list, item), 1);
      const bitmap = entry.bitmaps?.get(kind);
      if (bitmap) clearBit(bitmap, item.ordinal);
      if (list.length === 0) {
        entry.byKind.delete(kind);
        entry.bitmaps?.delete(kind);
      }
      if (--entry.count === 0) this.forget(entry);
    }
    for (const key of item.exactLower) unkey(this.exactLower, key, item);
    for (const key of item.exactUpper) unkey(this.exactUpper, key, item);
    this.ordinalsOf(kind).release(item.ordinal);
  }

  protected ordinalsOf(kind: SearchKind): Ordinals<SearchItem> {
    let ordinals = this.ordinals.get(kind);
    if (!ordinals) this.ordinals.set(kind, (ordinals = new Ordinals()));
    return ordinals;
  }

  private itemOf(source: SearchSource): SearchItem {
    // The database's text is already words (lower-cased in its locale): lower-cased again here as queries are.
    // One string per distinct word across the index, shared by every item holding it.
    const text: SearchItem['text'] = [];
    for (const token of source.text.split(' ')) {
      if (token === '') continue;
      if (token === '|') {
        if (text.length > 0 && text.at(-1) !== FIELD_BREAK) text.push(FIELD_BREAK);
        continue;
      }
      text.push(this.entryOf(token.toLowerCase()));
    }
    const words = [...new Set(text)].filter((entry) => entry !== FIELD_BREAK);
    const wordIds = words.map((entry) => entry.id);
    const active = source.status === null || source.status === 'ACTIVE';
    return {
      kind: source.kind,
      id: source.id,
      text,
      words,
      wordIds,
      active,
      order: words.length * 2 + (active ? 0 : 1),
      scan: 0,
      ordinal: -1,
      status: source.status,
      seriesId: source.seriesId,
      tagIds: source.tagIds.length > 0 ? source.tagIds : NO_TAGS,
      frequency: source.frequency === null ? null : source.frequency.toLowerCase(),
      exactLower: source.exactLower.map((key) => key.toLowerCase()),
      exactUpper: source.exactUpper,
    };
  }

  /** The entry of a word, made (with its trigrams and its place among the sorted words) if it is new. */
  private entryOf(word: string): WordEntry {
    let entry = this.entries.get(word);
    if (!entry) {
      const id = this.freeIds.pop() ?? this.entries.size;
      this.forgetWordLists();
      entry = { id, word, byKind: new Map(), bitmaps: undefined, count: 0 };
      this.entries.set(word, entry);
      if (this.sorted) this.sorted.splice(upperBound(this.sorted, word), 0, word);
      for (const trigram of trigramsOf(word)) {
        let words = this.trigrams.get(trigram);
        if (!words) this.trigrams.set(trigram, (words = new Set()));
        words.add(word);
      }
    }
    return entry;
  }

  /** A word no item holds any more: out of the sorted words and the trigrams, its id free again. */
  private forget(entry: WordEntry): void {
    const { word } = entry;
    this.entries.delete(word);
    this.freeIds.push(entry.id);
    this.forgetWordLists();
    if (this.sorted) this.sorted.splice(upperBound(this.sorted, word) - 1, 1);
    for (const trigram of trigramsOf(word)) {
      const words = this.trigrams.get(trigram)!;
      words.delete(word);
      if (words.size === 0) this.trigrams.delete(trigram);
    }
  }

  private add(item: SearchItem, keepOrder: boolean): void {
    this.items.set(`${item.kind}:${item.id}`, item);
    item.ordinal = this.ordinalsOf(item.kind).assign(item);
    for (const entry of item.words) {
      entry.count++;
      let list = entry.byKind.get(item.kind);
      if (!list) entry.byKind.set(item.kind, (list = []));
      if (keepOrder) list.splice(positionOf(list, item), 0, item);
      else list.push(item);
      const bitmap = entry.bitmaps?.get(item.kind);
      if (bitmap) entry.bitmaps!.set(item.kind, withBit(bitmap, item.ordinal));
    }
    for (const key of item.exactLower) addKey(this.exactLower, key, item);
    for (const key of item.exactUpper) addKey(this.exactUpper, key, item);
  }

  /** The first PREFIX_WORDS words of the index that begin with `word` (2 characters or more), in order. */
  prefixesOf(word: string): string[] {
    return kept(this.prefixes, word, () => this.findPrefixes(word));
  }

  /**
   * The TYPO_WORDS words of the index nearest `word`, fewest edits first: from TYPO_MIN_LENGTH characters and
   * not all digits, within 1 edit (2 from TYPO_TWO_EDITS_FROM characters), not starting with it and at most 2
   * characters longer or shorter.
   */
  typosOf(word: string): string[] {
    return kept(this.typos, word, () => this.findTypos(word));
  }

  private forgetWordLists(): void {
    this.prefixes.clear();
    this.typos.clear();
  }

  private findPrefixes(word: string): string[] {
    if (lengthOf(word) < 2) return [];
    this.sorted ??= [...this.entries.keys()].sort(compareCodePoints);
    const found: string[] = [];
    for (let i = upperBound(this.sorted, word); i < this.sorted.length && found.length < PREFIX_WORDS; i++) {
      const candidate = this.sorted[i]!;
      if (!candidate.startsWith(word)) break;
      found.push(candidate);
    }
    return found;
  }

  private findTypos(word: string): string[] {
    const length = lengthOf(word);
    if (length < TYPO_MIN_LENGTH || /^[0-9]+$/.test(word)) return [];
    const edits = length >= TYPO_TWO_EDITS_FROM ? 2 : 1;
    const own = trigramsOf(word);
    // A word within `edits` edits shares all but 3 trigrams per edit.
    const needed = Math.max(1, own.length - 3 * edits);
    const shared = new Map<string, number>();
    for (const trigram of own) for (const candidate of this.trigrams.get(trigram) ?? []) shared.set(candidate, (shared.get(candidate) ?? 0) + 1);
    const found: Array<{ word: string; edits: number }> = [];
    for (const [candidate, count] of shared) {
      if (count < needed || candidate === word || candidate.startsWith(word) || Math.abs(lengthOf(candidate) - length) > 2) continue;
      const d = distance(candidate, word);
      if (d <= edits) found.push({ word: candidate, edits: d });
    }
    found.sort((a, b) => a.edits - b.edits || (a.word < b.word ? -1 : 1));
    return found.slice(0, TYPO_WORDS).map((f) => f.word);
  }

  /** Items of `kind` with an exact key of `lowerText` (lower-cased keys) or `upperText` (upper-cased keys), in rank order. */
  protected exactOf(lowerText: string, upperText: string, kind: SearchKind): SearchItem[] {
    const found = new Set([...keyed(this.exactLower, lowerText), ...keyed(this.exactUpper, upperText)].filter((item) => item.kind === kind));
    return [...found].sort(compareItems);
  }
}

/**
 * Code point order (JavaScript compares UTF-16 units, which puts characters beyond U+FFFF before
 * U+E000-U+FFFF): at the first unit that differs, surrogates are moved above U+FFFF.
 */
function compareCodePoints(a: string, b: string): number {
  const length = Math.min(a.length, b.length);
  for (let i = 0; i < length; i++) {
    const x = a.charCodeAt(i);
    const y = b.charCodeAt(i);
    if (x !== y) {
      const order = (unit: number) => (unit >= 0xd800 && unit <= 0xdfff ? unit + 0x2000 : unit >= 0xe000 ? unit - 0x800 : unit);
      return order(x) - order(y);
    }
  }
  return a.length - b.length;
}

/** The index of the first word after `word` in `sorted` (code point order). */
function upperBound(sorted: string[], word: string): number {
  let low = 0;
  let high = sorted.length;
  while (low < high) {
    const middle = (low + high) >>> 1;
    if (compareCodePoints(sorted[middle]!, word) <= 0) low = middle + 1;
    else high = middle;
  }
  return low;
}

/** A query word's list kept in `lists`, found (and kept) if it is not; at WORD_LISTS_KEPT words the lists are forgotten first. */
function kept(lists: Map<string, string[]>, word: string, find: () => string[]): string[] {
  let list = lists.get(word);
  if (!list) {
    if (lists.size >= WORD_LISTS_KEPT) lists.clear();
    lists.set(word, (list = find()));
  }
  return list;
}

function keyed(map: Map<string, SearchItem | SearchItem[]>, key: string): SearchItem[] {
  const found = map.get(key);
  return found === undefined ? [] : Array.isArray(found) ? found : [found];
}

function addKey(map: Map<string, SearchItem | SearchItem[]>, key: string, item: SearchItem): void {
  const found = map.get(key);
  if (found === undefined) map.set(key, item);
  else if (Array.isArray(found)) found.push(item);
  else map.set(key, [found, item]);
}

function unkey(map: Map<string, SearchItem | SearchItem[]>, key: string, item: SearchItem): void {
  const rest = keyed(map, key).filter((other) => other !== item);
  if (rest.length === 0) map.delete(key);
  else map.set(key, rest.length === 1 ? rest[0]! : rest);
}

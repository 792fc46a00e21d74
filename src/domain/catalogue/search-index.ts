import { distance } from 'fastest-levenshtein';
import type { SearchItemRecord } from '../../db/repositories/search-index.js';
import type { SearchKind } from '../../db/tables.js';
import { clearBit, countCommon, orInto, Ordinals, setBits, withBit, wordsFor } from './item-sets.js';

/**
 * The word index both searches read (`/api/search`, `/public-search`): every searchable item of the catalogue
 * as words, held in memory by each process and kept current by `LiveSearchIndex` (live-search-index.ts).
 *
 * Words. A text is lower-cased, and every run of characters that are not letters or digits (ASCII punctuation
 * and symbols such as `#`, `-`, `.`, and the Unicode punctuation blocks) separates words. An item's text is
 * its fields (series: title, ticker, slug; event: title, ticker, slug, then its series' fields; market: title,
 * ticker, then its event's; tag: label, slug; profile: username, name), as the database keeps them in
 * `search_text` (fields separated by ` | `).
 *
 * Matching. A query's first SEARCH_WORDS_MAX words must each match a word of the item: whole; as a prefix
 * (a word of 2 or more characters: one of the first PREFIX_WORDS words of the index that start with it, in
 * order); or, from TYPO_MIN_LENGTH characters and not all digits, as a typo: one of the TYPO_WORDS words of
 * the index nearest it within 1 edit (2 from TYPO_TWO_EDITS_FROM characters), not starting with it and at
 * most 2 characters longer or shorter.
 *
 * Rank (0 best): 0 the whole text equals the title, ticker, slug or username (case-insensitive); 1 every word
 * whole, in the query's order within one field; 2 every word whole; 3 every word whole or as a prefix; 4 with
 * typos. Within a rank, items with fewer distinct words first, then active before not, then (here) by id; the
 * database orders the candidates by volume after these (see `withinFirst`).
 *
 * Cost. Each word's items are kept per kind in rank order (fewer words, active, id); a query reads the items
 * of its rarest word (with its prefixes, its corrections) in that order, checks the other words, and stops
 * when nothing further can rank better, or after SCAN_MAX items: a query never reads more than that many items
 * per kind and step, however large the catalogue. The words a query accepts are marked on their entries
 * before each evaluation (`mark`), so that checking an item reads its own words' marks only. Counting every
 * match (`count`) of a query whose rarest word is common does not check items: it ANDs the bitmaps of the
 * query's words (item-sets.ts); a word holding many items keeps its bitmap once a count has asked for it.
 *
 * One class over the usual 400 lines on purpose: its structures (word entries with their per-kind lists and
 * bitmaps, the sorted words, trigrams, exact keys, ordinals, marks, kept prefixes and corrections) must change
 * together on every `put` and `remove`, and each query step reads several of them; the bitmap arithmetic,
 * which needs none of them, is in item-sets.ts.
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
const FIELD_BREAK = null;
const NO_TAGS: readonly string[] = [];
const PASS_ALL = (_item: SearchItem) => true;

/** One candidate: an item and its rank. */
export interface SearchCandidate {
  item: SearchItem;
  tier: number;
}

export const SEARCH_WORDS_MAX = 10;
export const PREFIX_WORDS = 20;
export const TYPO_WORDS = 8;
export const TYPO_MIN_LENGTH = 4;
export const TYPO_TWO_EDITS_FROM = 7;
/** Query words whose prefixes and corrections are kept (see SearchIndex.prefixesOf, typosOf), at most, each. */
const WORD_LISTS_KEPT = 10_000;
/** Items read per kind and step of a query, at most. */
export const SCAN_MAX = 20_000;
/**
 * Checking an item by its words costs about as much as ANDing this many 32-bit words of bitmaps: `count`
 * checks the items of the rarest word while they cost less than ANDing every query word's bitmap.
 */
const ITEM_CHECK_COST = 16;

/**
 * What separates words: the characters the database's `dots_search_words` (src/db/functions) leaves out, and only
 * those (test/integration/search-words.test.ts compares the two).
 */
const NOT_WORD = /[^0-9a-z\u00c0-\u1fff\u2c00-\u2dff\u3040-\ud7ff\uf900-\ufdff\ufe70-\ufeff\uff10-\uff19\uff21-\uff3a\uff41-\uff5a\uff66-\uffdc\u{10000}-\u{1efff}\u{20000}-\u{dffff}\u{e1000}-\u{10ffff}]+/gu;

/** The words of a text, in order (repeats kept). */
export function wordsOf(text: string): string[] {
  const words = text.toLowerCase().replace(NOT_WORD, ' ').trim();
  return words === '' ? [] : words.split(' ');
}

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

/** A word of the index: the items holding it, and what the query being evaluated makes of it. */
export interface WordEntry {
  /** A small integer, reused once the word is gone: its place in the marks (SearchIndex.mark). */
  id: number;
  word: string;
  /** Items holding the word, per kind, in compareItems order. */
  byKind: Map<SearchKind, SearchItem[]>;
  /** The same items as bitmaps, for the kinds a count asked for (SearchIndex.bitmapOf). */
  bitmaps: Map<SearchKind, Int32Array> | undefined;
  count: number;
}

/** How a query word may be matched: itself, the words it begins, its corrections (each found when first asked). */
export class QueryWord {
  private prefixList: string[] | undefined;
  private typoList: string[] | undefined;

  constructor(
    readonly word: string,
    private readonly index: SearchIndex,
  ) {}

  get prefixes(): readonly string[] {
    return (this.prefixList ??= this.index.prefixesOf(this.word));
  }

  get typos(): readonly string[] {
    return (this.typoList ??= this.index.typosOf(this.word));
  }
}

/** Steps of a query, each wider than the one before. */
const enum Step {
  Whole = 0,
  Prefix = 1,
  Typo = 2,
}

/** Bits of a word's marks: query word i matched whole (bit i), as a prefix (bit 10 + i), as a typo (bit 20 + i). */
const STEP_SHIFT = 10;

export interface SearchQuery {
  /** The query's words, as matched. */
  words: QueryWord[];
  lowerText: string;
  upperText: string;
}

export class SearchIndex {
  private readonly items = new Map<string, SearchItem>();
  private readonly entries = new Map<string, WordEntry>();
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

  /** An index of these items, built at once. */
  static of(sources: Iterable<SearchSource>): SearchIndex {
    const index = new SearchIndex();
    for (const source of sources) index.add(index.itemOf(source), false);
    for (const entry of index.entries.values()) for (const list of entry.byKind.values()) list.sort(compareItems);
    return index;
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
      const word = entry.word;
      const list = entry.byKind.get(kind)!;
      list.splice(positionOf(list, item), 1);
      const bitmap = entry.bitmaps?.get(kind);
      if (bitmap) clearBit(bitmap, item.ordinal);
      if (list.length === 0) {
        entry.byKind.delete(kind);
        entry.bitmaps?.delete(kind);
      }
      if (--entry.count === 0) {
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
    }
    for (const key of item.exactLower) unkey(this.exactLower, key, item);
    for (const key of item.exactUpper) unkey(this.exactUpper, key, item);
    this.ordinalsOf(kind).release(item.ordinal);
  }

  private ordinalsOf(kind: SearchKind): Ordinals<SearchItem> {
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
      if (id >= this.stamps.length) {
        const grown = (array: Int32Array) => {
          const larger = new Int32Array(array.length * 2);
          larger.set(array);
          return larger;
        };
        this.stamps = grown(this.stamps);
        this.bits = grown(this.bits);
      }
      this.stamps[id] = 0;
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

  /** The query of a text: its words with their prefixes and corrections. */
  query(text: string): SearchQuery {
    const lowerText = text.toLowerCase();
    const words = wordsOf(text)
      .slice(0, SEARCH_WORDS_MAX)
      .map((word) => new QueryWord(word, this));
    return { words, lowerText, upperText: lowerText.toUpperCase() };
  }

  /** The first PREFIX_WORDS words of the index that begin with `word` (2 characters or more), in order. */
  prefixesOf(word: string): string[] {
    return kept(this.prefixes, word, () => this.findPrefixes(word));
  }

  /** The TYPO_WORDS words nearest `word` within its edits (see the module comment), fewest edits first. */
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

  /** Items of `kind` whose whole text equals the query's (rank 0). */
  private exactOf(query: SearchQuery, kind: SearchKind): SearchItem[] {
    const found = new Set([...keyed(this.exactLower, query.lowerText), ...keyed(this.exactUpper, query.upperText)].filter((item) => item.kind === kind));
    return [...found].sort(compareItems);
  }

  /** Ids of words gone, to reuse. */
  private readonly freeIds: number[] = [];
  /** Per word id: the evaluation that last marked it (`mark`), and how it matched that query's words. */
  private stamps = new Int32Array(1024);
  private bits = new Int32Array(1024);
  private stamp = 0;

  /** Marks the words that match the query's words, up to `step`, for the evaluation that follows (synchronous). */
  private mark(query: SearchQuery, step: Step): number {
    if (++this.stamp > 0x7fffffff) {
      // Stamps are 32-bit: start again, forgetting every mark, rather than reuse one.
      this.stamps.fill(0);
      this.stamp = 1;
    }
    const stamp = this.stamp;
    for (let i = 0; i < query.words.length; i++) {
      const w = query.words[i]!;
      this.markWord(w.word, 1 << i, stamp);
      if (step >= Step.Prefix) for (const word of w.prefixes) this.markWord(word, 1 << (STEP_SHIFT + i), stamp);
      if (step >= Step.Typo) for (const word of w.typos) this.markWord(word, 1 << (2 * STEP_SHIFT + i), stamp);
    }
    return stamp;
  }

  private markWord(word: string, bit: number, stamp: number): void {
    const entry = this.entries.get(word);
    if (!entry) return;
    if (this.stamps[entry.id] !== stamp) {
      this.stamps[entry.id] = stamp;
      this.bits[entry.id] = 0;
    }
    this.bits[entry.id]! |= bit;
  }

  /** The widest step at which each query word matches the item, or -1 when one does not (words marked by `stamp`). */
  private stepOf(item: SearchItem, query: SearchQuery, stamp: number): number {
    const { stamps, bits: marks } = this;
    let bits = 0;
    for (const id of item.wordIds) if (stamps[id] === stamp) bits |= marks[id]!;
    const all = (1 << query.words.length) - 1;
    const mask = (1 << STEP_SHIFT) - 1;
    const whole = bits & mask;
    if (whole === all) return Step.Whole;
    const prefix = whole | ((bits >>> STEP_SHIFT) & mask);
    if (prefix === all) return Step.Prefix;
    return (prefix | (bits >>> (2 * STEP_SHIFT))) === all ? Step.Typo : -1;
  }

  /** Whether the query's words occur whole, in order, within one field. */
  private static inOrder(item: SearchItem, query: SearchQuery): boolean {
    const wanted = query.words.length;
    let next = 0;
    for (const entry of item.text) {
      if (entry === FIELD_BREAK) next = 0;
      else if (next < wanted && entry.word === query.words[next]!.word && ++next === wanted) return true;
    }
    return false;
  }

  /** The words a query word accepts at a step. */
  private static accepted(w: QueryWord, step: Step): readonly string[] {
    return step === Step.Whole ? [w.word] : step === Step.Prefix ? [w.word, ...w.prefixes] : [w.word, ...w.prefixes, ...w.typos];
  }

  /** The lists of items of `kind` holding a word the rarest query word accepts at `step`, and how many items they hold. */
  private rarest(query: SearchQuery, kind: SearchKind, step: Step): { lists: SearchItem[][]; size: number } {
    let found = { lists: [] as SearchItem[][], size: Infinity };
    for (const w of query.words) {
      const lists = SearchIndex.accepted(w, step).flatMap((word) => {
        const list = this.entries.get(word)?.byKind.get(kind);
        return list ? [list] : [];
      });
      const size = lists.reduce((sum, list) => sum + list.length, 0);
      if (size < found.size) found = { lists, size };
    }
    return found.size === Infinity ? { lists: [], size: 0 } : found;
  }

  private scanned = 0;

  /**
   * Visits the items of `lists` (rarest's), each once, at most SCAN_MAX, until `visit` answers false: in rank
   * order within a tier (the lists merged), or, `unordered`, list after list.
   */
  private scan(lists: SearchItem[][], unordered: boolean, visit: (item: SearchItem) => boolean): void {
    if (lists.length === 1) {
      const list = lists[0]!;
      for (let i = 0; i < list.length && i < SCAN_MAX; i++) if (!visit(list[i]!)) return;
      return;
    }
    // Items held by several of the lists are visited once: marked with this scan's number.
    const scan = ++this.scanned;
    let read = 0;
    const first = (item: SearchItem) => {
      if (item.scan === scan) return false;
      item.scan = scan;
      read++;
      return true;
    };
    if (unordered) {
      for (const list of lists) for (const item of list) if (first(item) && (read > SCAN_MAX || !visit(item))) return;
      return;
    }
    const heads = lists.map(() => 0);
    while (read < SCAN_MAX) {
      let best = -1;
      for (let l = 0; l < lists.length; l++) {
        const head = lists[l]![heads[l]!];
        if (head && (best < 0 || compareItems(head, lists[best]![heads[best]!]!) < 0)) best = l;
      }
      if (best < 0) return;
      const item = lists[best]![heads[best]!++]!;
      if (first(item) && !visit(item)) return;
    }
  }

  /**
   * The best items of `kind` passing `filter`, at most `limit`, in rank order (tier, then compareItems): exact
   * matches, then those matching every word whole (in order first), then, when fewer than `widenBelow` (default
   * `limit`) were found, those matching as prefixes, and when still fewer, with typos.
   */
  best(query: SearchQuery, kind: SearchKind, limit: number, options: { filter?: (item: SearchItem) => boolean; widenBelow?: number } = {}): SearchCandidate[] {
    const pass = options.filter ?? PASS_ALL;
    return this.widen(query, kind, limit, this.whole(query, kind, limit, pass), options.widenBelow ?? limit, pass);
  }

  /** What `best` finds before widening: exact matches, then every word whole (in order first); at most `limit`. */
  whole(query: SearchQuery, kind: SearchKind, limit: number, pass: (item: SearchItem) => boolean = PASS_ALL): SearchCandidate[] {
    if (query.words.length === 0 || limit <= 0) return [];
    const exact = this.exactOf(query, kind).filter(pass);
    const result: SearchCandidate[] = exact.slice(0, limit).map((item) => ({ item, tier: 0 }));
    const taken = new Set(exact);
    // Whole words: in order (rank 1) or not (2). Nothing after `limit` items of rank 1 can rank better.
    const inOrder: SearchCandidate[] = [];
    const anyOrder: SearchCandidate[] = [];
    const room = () => limit - result.length;
    const stamp = this.mark(query, Step.Whole);
    this.scan(this.rarest(query, kind, Step.Whole).lists, false, (item) => {
      if (taken.has(item) || !pass(item) || this.stepOf(item, query, stamp) !== Step.Whole) return true;
      if (SearchIndex.inOrder(item, query)) inOrder.push({ item, tier: 1 });
      else if (anyOrder.length < room()) anyOrder.push({ item, tier: 2 });
      return inOrder.length < room();
    });
    result.push(...[...inOrder, ...anyOrder].slice(0, room()));
    return result;
  }

  /**
   * `found` (what `whole` found for the same query, kind, limit and filter) followed, while fewer than
   * `widenBelow` were found, by prefix matches, then typo matches; at most `limit` in all.
   */
  widen(query: SearchQuery, kind: SearchKind, limit: number, found: readonly SearchCandidate[], widenBelow: number, pass: (item: SearchItem) => boolean = PASS_ALL): SearchCandidate[] {
    const result = [...found];
    const room = () => limit - result.length;
    if (room() <= 0 || result.length >= widenBelow) return result;
    const exact = new Set(this.exactOf(query, kind));
    for (const step of [Step.Prefix, Step.Typo]) {
      if (room() <= 0 || result.length >= widenBelow) break;
      const stamp = this.mark(query, step);
      this.scan(this.rarest(query, kind, step).lists, false, (item) => {
        if (!exact.has(item) && pass(item) && this.stepOf(item, query, stamp) === step) result.push({ item, tier: step === Step.Prefix ? 3 : 4 });
        return room() > 0;
      });
    }
    return result;
  }

  /** How many items of `kind` passing `filter` match the query at any step, counted up to `cap`. */
  count(query: SearchQuery, kind: SearchKind, cap: number, filter: (item: SearchItem) => boolean = PASS_ALL): number {
    if (query.words.length === 0) return 0;
    const rarest = this.rarest(query, kind, Step.Typo);
    const ordinals = this.ordinalsOf(kind);
    const words = wordsFor(ordinals.capacity);
    if (rarest.size * ITEM_CHECK_COST <= words * query.words.length) {
      let counted = 0;
      const stamp = this.mark(query, Step.Typo);
      this.scan(rarest.lists, true, (item) => {
        if (filter(item) && this.stepOf(item, query, stamp) >= 0) counted++;
        return counted < cap;
      });
      return counted;
    }
    // Items holding, for every query word, a word it accepts: the AND of each query word's items.
    const each = query.words.map((w) => this.acceptedBitmap(w, kind, words));
    return countCommon(each, cap, filter === PASS_ALL ? undefined : (ordinal) => filter(ordinals.at(ordinal)!));
  }

  /** The items of `kind` holding a word `w` accepts (at any step), as a bitmap of `words` 32-bit words (or a kept one). */
  private acceptedBitmap(w: QueryWord, kind: SearchKind, words: number): Int32Array {
    const lists: Array<{ entry: WordEntry; list: SearchItem[] }> = [];
    for (const word of SearchIndex.accepted(w, Step.Typo)) {
      const entry = this.entries.get(word);
      const list = entry?.byKind.get(kind);
      if (list) lists.push({ entry: entry!, list });
    }
    // A list at least as large as its bitmap (8 bytes an item, 4 a 32-bit word) is read as its bitmap, which
    // is kept; a smaller one item by item.
    const kept = ({ list }: { list: SearchItem[] }) => list.length * 2 >= words;
    if (lists.length === 1 && kept(lists[0]!)) return this.bitmapOf(lists[0]!.entry, kind, lists[0]!.list);
    const union = new Int32Array(words);
    for (const found of lists) {
      if (kept(found)) orInto(union, this.bitmapOf(found.entry, kind, found.list));
      else setBits(union, found.list);
    }
    return union;
  }

  /** The bitmap of `list` (the items of `kind` holding `entry`'s word): made the first time it is asked for, then kept up to date. */
  private bitmapOf(entry: WordEntry, kind: SearchKind, list: readonly SearchItem[]): Int32Array {
    let bitmap = entry.bitmaps?.get(kind);
    if (!bitmap) {
      bitmap = new Int32Array(wordsFor(this.ordinalsOf(kind).capacity));
      setBits(bitmap, list);
      (entry.bitmaps ??= new Map()).set(kind, bitmap);
    }
    return bitmap;
  }
}

/**
 * The candidates that can still be among the first `limit` once the database orders equal rank, words and
 * activity by volume: those ranked at least as well as the `limit`-th by the index.
 */
export function withinFirst<T extends SearchCandidate>(candidates: readonly T[], limit: number): T[] {
  if (candidates.length <= limit) return [...candidates];
  const key = (candidate: T) => candidate.tier * 1_000_000 + candidate.item.order;
  const last = candidates.map(key).sort((a, b) => a - b)[limit - 1]!;
  return candidates.filter((candidate) => key(candidate) <= last);
}

/**
 * Code point order (JavaScript compares UTF-16 units, which puts characters beyond U+FFFF before
 * U+E000-U+FFFF): at the first unit that differs, surrogates are moved above U+FFFF.
 */
export function compareCodePoints(a: string, b: string): number {
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

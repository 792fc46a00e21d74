import { countCommon, orInto, setBits, wordsFor } from './item-sets.js';
import { compareItems, FIELD_BREAK, IndexedItems, type SearchItem, type SearchKind, type WordEntry } from './indexed-items.js';

/**
 * The word index both searches read (`/api/search`, `/public-search`), held in memory by each process: its
 * items as words are kept in indexed-items.ts; this evaluates queries against them.
 *
 * Words. A text is lower-cased, and every run of characters that are not letters or digits (ASCII punctuation
 * and symbols such as `#`, `-`, `.`, and the Unicode punctuation blocks) separates words.
 *
 * Matching. A query's first SEARCH_WORDS_MAX words must each match a word of the item: whole; as a prefix
 * (a word of 2 or more characters: one of the first words of the index that start with it, in order); or as
 * a typo: one of the words of the index nearest it (`prefixesOf` and `typosOf` in indexed-items.ts).
 *
 * Rank (0 best): 0 the whole text equals the title, ticker, slug or username (case-insensitive); 1 every word
 * whole, in the query's order within one field; 2 every word whole; 3 every word whole or as a prefix; 4 with
 * typos. Within a rank, items with fewer distinct words first, then active before not, then (here) by id; the
 * database orders the candidates by volume after these (see `withinFirst`).
 *
 * Cost. A query reads the items of its rarest word (with its prefixes, its corrections) in rank order, checks
 * the other words, and stops when nothing further can rank better, or after SCAN_MAX items: a query never
 * reads more than that many items per kind and step, however large the catalogue. The words a query accepts
 * are marked on their entries before each evaluation (`mark`), so that checking an item reads its own words'
 * marks only. Counting every match (`count`) of a query whose rarest word is common does not check items: it
 * ANDs the bitmaps of the query's words (item-sets.ts); a word holding many items keeps its bitmap once a count
 * has asked for it.
 */

const PASS_ALL = (_item: SearchItem) => true;

/** One candidate: an item and its rank. */
export interface SearchCandidate {
  item: SearchItem;
  tier: number;
}

const SEARCH_WORDS_MAX = 10;
/** Items read per kind and step of a query, at most. */
const SCAN_MAX = 20_000;
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

/** How a query word may be matched: itself, the words it begins, its corrections (each found when first asked). */
class QueryWord {
  private prefixList: string[] | undefined;
  private typoList: string[] | undefined;

  constructor(
    readonly word: string,
    private readonly index: IndexedItems,
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

/** Whether the query's words occur whole, in order, within one field. */
function inOrder(item: SearchItem, query: SearchQuery): boolean {
  const wanted = query.words.length;
  let next = 0;
  for (const entry of item.text) {
    if (entry === FIELD_BREAK) next = 0;
    else if (next < wanted && entry.word === query.words[next]!.word && ++next === wanted) return true;
  }
  return false;
}

/** The words a query word accepts at a step. */
function accepted(w: QueryWord, step: Step): readonly string[] {
  return step === Step.Whole ? [w.word] : step === Step.Prefix ? [w.word, ...w.prefixes] : [w.word, ...w.prefixes, ...w.typos];
}

export class SearchIndex extends IndexedItems {
  /** Per word id: the evaluation that last marked it (`mark`), and how it matched that query's words. */
  private stamps = new Int32Array(1024);
  private bits = new Int32Array(1024);
  private stamp = 0;
  private scanned = 0;

  /** The query of a text: its words with their prefixes and corrections. */
  query(text: string): SearchQuery {
    const lowerText = text.toLowerCase();
    const words = wordsOf(text)
      .slice(0, SEARCH_WORDS_MAX)
      .map((word) => new QueryWord(word, this));
    return { words, lowerText, upperText: lowerText.toUpperCase() };
  }

  /** Marks the words that match the query's words, up to `step`, for the evaluation that follows (synchronous). */
  private mark(query: SearchQuery, step: Step): number {
    // Room for every word id (a reused id keeps its old stamp, older than any evaluation to come).
    while (this.stamps.length < this.wordIds) {
      const grown = (array: Int32Array) => {
        const larger = new Int32Array(array.length * 2);
        larger.set(array);
        return larger;
      };
      this.stamps = grown(this.stamps);
      this.bits = grown(this.bits);
    }
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
  private stepOf(item: SearchItem, query: SearchQuery, stamp: number): Step | -1 {
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

  /** The lists of items of `kind` holding a word the rarest query word accepts at `step`, and how many items they hold. */
  private rarest(query: SearchQuery, kind: SearchKind, step: Step): { lists: SearchItem[][]; size: number } {
    let found = { lists: [] as SearchItem[][], size: Infinity };
    for (const w of query.words) {
      const lists = accepted(w, step).flatMap((word) => {
        const list = this.entries.get(word)?.byKind.get(kind);
        return list ? [list] : [];
      });
      const size = lists.reduce((sum, list) => sum + list.length, 0);
      if (size < found.size) found = { lists, size };
    }
    return found.size === Infinity ? { lists: [], size: 0 } : found;
  }

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
    const exact = this.exactOf(query.lowerText, query.upperText, kind).filter(pass);
    const result: SearchCandidate[] = exact.slice(0, limit).map((item) => ({ item, tier: 0 }));
    const taken = new Set(exact);
    // Whole words: in order (rank 1) or not (2). Nothing after `limit` items of rank 1 can rank better.
    const ordered: SearchCandidate[] = [];
    const anyOrder: SearchCandidate[] = [];
    const room = () => limit - result.length;
    const stamp = this.mark(query, Step.Whole);
    this.scan(this.rarest(query, kind, Step.Whole).lists, false, (item) => {
      if (taken.has(item) || !pass(item) || this.stepOf(item, query, stamp) !== Step.Whole) return true;
      if (inOrder(item, query)) ordered.push({ item, tier: 1 });
      else if (anyOrder.length < room()) anyOrder.push({ item, tier: 2 });
      return ordered.length < room();
    });
    result.push(...[...ordered, ...anyOrder].slice(0, room()));
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
    const exact = new Set(this.exactOf(query.lowerText, query.upperText, kind));
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
        if (filter(item) && this.stepOf(item, query, stamp) !== -1) counted++;
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
    for (const word of accepted(w, Step.Typo)) {
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

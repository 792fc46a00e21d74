/**
 * Sets of items as bitmaps, for counting the items a query matches (SearchIndex.count) without visiting them:
 * the items of a query word (with its prefixes and corrections) are one bitmap, the query's words are ANDed,
 * and the bits left are counted. Each item of a kind has an ordinal, its bit, reused once the item is gone.
 * ANDing or ORing bitmaps reads them in order, a few thousand 32-bit words for a hundred thousand items,
 * where checking each item of a long list reads that item's words from wherever it lies in memory.
 */

/** The ordinals of one kind's items: each item's bit in a bitmap. */
export class Ordinals<T> {
  readonly #items: Array<T | undefined> = [];
  readonly #free: number[] = [];

  /** Bits a bitmap of these items needs: one more than the highest ordinal in use so far. */
  get capacity(): number {
    return this.#items.length;
  }

  assign(item: T): number {
    const ordinal = this.#free.pop() ?? this.#items.length;
    this.#items[ordinal] = item;
    return ordinal;
  }

  release(ordinal: number): void {
    this.#items[ordinal] = undefined;
    this.#free.push(ordinal);
  }

  at(ordinal: number): T | undefined {
    return this.#items[ordinal];
  }
}

/** 32-bit words a bitmap of `bits` bits takes. */
export const wordsFor = (bits: number) => (bits + 31) >>> 5;

/** `bitmap` with `ordinal` set: the same array, or a larger copy when it was too short. */
export function withBit(bitmap: Int32Array, ordinal: number): Int32Array {
  const word = ordinal >>> 5;
  let target = bitmap;
  if (word >= bitmap.length) {
    target = new Int32Array(Math.max(word + 1, bitmap.length * 2));
    target.set(bitmap);
  }
  target[word]! |= 1 << (ordinal & 31);
  return target;
}

export function clearBit(bitmap: Int32Array, ordinal: number): void {
  const word = ordinal >>> 5;
  if (word < bitmap.length) bitmap[word]! &= ~(1 << (ordinal & 31));
}

/** Sets the bits of these items' ordinals in `bitmap` (long enough for every one). */
export function setBits(bitmap: Int32Array, items: ReadonlyArray<{ readonly ordinal: number }>): void {
  for (const { ordinal } of items) bitmap[ordinal >>> 5]! |= 1 << (ordinal & 31);
}

/** `target |= source`, over `target`'s length (words beyond `source` are unset there). */
export function orInto(target: Int32Array, source: Int32Array): void {
  const length = Math.min(target.length, source.length);
  for (let i = 0; i < length; i++) target[i]! |= source[i]!;
}

function bitCount(word: number): number {
  let v = word - ((word >>> 1) & 0x55555555);
  v = (v & 0x33333333) + ((v >>> 2) & 0x33333333);
  return (((v + (v >>> 4)) & 0x0f0f0f0f) * 0x01010101) >>> 24;
}

/**
 * How many bits are set in every one of `bitmaps` (bits beyond a bitmap's length are unset there) and pass
 * `test`, given each one's ordinal (none: every such bit counts); counted up to `cap`. One pass, and none of
 * the bitmaps is written.
 */
export function countCommon(bitmaps: readonly Int32Array[], cap: number, test?: (ordinal: number) => boolean): number {
  if (bitmaps.length === 0) return 0;
  let length = Infinity;
  for (const bitmap of bitmaps) length = Math.min(length, bitmap.length);
  const [first, ...others] = bitmaps as [Int32Array, ...Int32Array[]];
  let counted = 0;
  for (let i = 0; i < length && counted < cap; i++) {
    let word = first[i]!;
    for (let j = 0; j < others.length && word !== 0; j++) word &= others[j]![i]!;
    if (word === 0) continue;
    if (!test) {
      counted += bitCount(word);
      continue;
    }
    while (word !== 0 && counted < cap) {
      const low = word & -word;
      if (test((i << 5) + 31 - Math.clz32(low))) counted++;
      word ^= low;
    }
  }
  return Math.min(counted, cap);
}

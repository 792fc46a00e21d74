import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { clearBit, countCommon, orInto, Ordinals, setBits, withBit, wordsFor } from './item-sets.js';

const bitmapOf = (ordinals: readonly number[], bits = Math.max(0, ...ordinals) + 1) => {
  const bitmap = new Int32Array(wordsFor(bits));
  setBits(bitmap, ordinals.map((ordinal) => ({ ordinal })));
  return bitmap;
};

describe('Ordinals', () => {
  it('gives each item the lowest free ordinal, and reuses one once released', () => {
    const ordinals = new Ordinals<string>();
    expect(['a', 'b', 'c'].map((item) => ordinals.assign(item))).toEqual([0, 1, 2]);
    ordinals.release(1);
    expect(ordinals.at(1)).toBeUndefined();
    expect(ordinals.assign('d')).toBe(1);
    expect(ordinals.at(1)).toBe('d');
    expect(ordinals.capacity).toBe(3);
  });
});

describe('bitmaps', () => {
  it('grow when a bit beyond them is set, and clear bits in place', () => {
    let bitmap: Int32Array = bitmapOf([3], 32);
    expect(bitmap.length).toBe(1);
    bitmap = withBit(bitmap, 100);
    expect(bitmap.length).toBe(4);
    expect(countCommon([bitmap], 10)).toBe(2);
    clearBit(bitmap, 3);
    clearBit(bitmap, 1_000); // beyond it: nothing to clear
    expect(countCommon([bitmap], 10)).toBe(1);
  });

  it('count the bits common to every bitmap, filtered and up to a cap, as a set intersection does', () => {
    const ordinals = fc.uniqueArray(fc.integer({ min: 0, max: 300 }), { maxLength: 120 });
    fc.assert(
      fc.property(fc.array(ordinals, { minLength: 1, maxLength: 4 }), fc.integer({ min: 0, max: 150 }), fc.integer({ min: 1, max: 7 }), (sets, cap, modulo) => {
        // Bitmaps of different lengths: bits beyond a shorter one are unset there.
        const bitmaps = sets.map((set) => bitmapOf(set));
        const common = sets[0]!.filter((ordinal) => sets.every((set) => set.includes(ordinal)));
        expect(countCommon(bitmaps, cap)).toBe(Math.min(cap, common.length));
        const test = (ordinal: number) => ordinal % modulo === 0;
        expect(countCommon(bitmaps, cap, test)).toBe(Math.min(cap, common.filter(test).length));
      }),
    );
  });

  it('OR into a bitmap over its own length', () => {
    const target = bitmapOf([1], 64);
    orInto(target, bitmapOf([5, 40, 200]));
    expect(countCommon([target], 100)).toBe(4 - 1); // 200 lies beyond the target's 64 bits
  });
});

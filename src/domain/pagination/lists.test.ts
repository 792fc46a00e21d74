import { describe, expect, it } from 'vitest';
import { firstOf, listValues } from './lists.js';

describe('listValues', () => {
  it('merges repeated, comma-separated and aliased values, once each', () => {
    expect(listValues(['a,b', 'c'], 'b,d', undefined, [' e ', ''])).toEqual(['a', 'b', 'c', 'd', 'e']);
    expect(listValues()).toEqual([]);
  });

  it('takes the first spelling given', () => {
    expect(firstOf(undefined, 0, 5)).toBe(0);
    expect(firstOf<string>()).toBeUndefined();
  });
});

import { describe, expect, it } from 'vitest';
import { canName, isId, searchText, splitReferences } from './compat-refs.js';

describe('compatibility references', () => {
  it('takes only 1 to 18 digits as an id', () => {
    expect(isId('42')).toBe(true);
    expect(isId('123456789012345678')).toBe(true);
    expect(isId('1234567890123456789')).toBe(false);
    expect(isId('4x')).toBe(false);
    expect(isId('-1')).toBe(false);
    expect(isId('')).toBe(false);
  });

  it('drops values that cannot name stored text and splits ids from keys', () => {
    expect(canName('a\0b')).toBe(false);
    expect(splitReferences(['12', 'KXFED', 'x\0'])).toEqual({ ids: ['12'], keys: ['12', 'KXFED'] });
    expect(splitReferences(['Elections'])).toEqual({ ids: [], keys: ['Elections'] });
  });

  it('trims and cuts the search text, and has none without a letter or digit', () => {
    expect(searchText('  Fed #12 ')).toBe('Fed #12');
    expect(searchText('50%_off\\')).toBe('50%_off\\');
    expect(searchText('x'.repeat(10_000))).toHaveLength(100);
    expect(searchText('a\0b')).toBe('ab');
    expect(searchText('   ')).toBeUndefined();
    expect(searchText('%_#')).toBeUndefined();
    expect(searchText('😀'.repeat(150))).toBeUndefined();
    expect(searchText('é'.repeat(150))).toBe('é'.repeat(100));
  });
});

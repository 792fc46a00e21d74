import { describe, expect, it } from 'vitest';
import { searchedText, searchTerms } from './search.js';

describe('searchedText', () => {
  it('trims, removes NUL and keeps the first 100 characters (code points), case kept', () => {
    expect(searchedText('  Fed Rate  ')).toBe('Fed Rate');
    expect(searchedText('\0ab\0')).toBe('ab');
    expect(searchedText('x'.repeat(10_000))).toBe('x'.repeat(100));
    expect(Array.from(searchedText('😀'.repeat(150)))).toHaveLength(100);
    expect(searchedText(`${'a'.repeat(99)}  b`)).toBe('a'.repeat(99));
  });
});

describe('searchTerms', () => {
  it('gives the lower-case text, the upper-case ticker form and escaped LIKE patterns', () => {
    expect(searchTerms('Fed_50%')).toEqual({
      text: 'fed_50%',
      upper: 'FED_50%',
      prefix: 'fed\\_50\\%%',
      upperPrefix: 'FED\\_50\\%%',
      contains: '%fed\\_50\\%%',
    });
    expect(searchTerms('a\\b')?.prefix).toBe('a\\\\b%');
  });

  it('searches "anywhere" only with a run of three letters or digits, and nothing without any', () => {
    expect(searchTerms('ab')?.contains).toBeUndefined();
    expect(searchTerms('a-b-c')?.contains).toBeUndefined();
    expect(searchTerms('abc')?.contains).toBe('%abc%');
    expect(searchTerms('%%')).toBeUndefined();
    expect(searchTerms("' --")).toBeUndefined();
  });
});

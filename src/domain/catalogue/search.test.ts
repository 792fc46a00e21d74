import { describe, expect, it } from 'vitest';
import { prefixEnd, searchedText, searchTerms } from './search.js';

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
      prefixEnd: 'fed_50&',
      upperPrefixEnd: 'FED_50&',
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

describe('prefixEnd', () => {
  const starts = (text: string, prefix: string) => text.startsWith(prefix);
  const below = (a: string, b: string) => Buffer.compare(Buffer.from(a), Buffer.from(b)) < 0;

  it('is above every string with the prefix and below the next prefix, in UTF-8 byte order', () => {
    expect(prefixEnd('price')).toBe('pricf');
    expect(prefixEnd('az')).toBe('a{');
    expect(prefixEnd('a\u{10FFFF}')).toBe('b');
    expect(prefixEnd('a\uD7FF')).toBe('a\uE000');
    for (const [prefix, text] of [['price', 'prices'], ['price', 'price\u{10FFFF}x'], ['é', 'éa'], ['a\uD7FF', 'a\uD7FF😀']] as const) {
      expect(starts(text, prefix)).toBe(true);
      expect(below(text, prefixEnd(prefix))).toBe(true);
      expect(below(prefix, prefixEnd(prefix))).toBe(true);
    }
    expect(below(prefixEnd('price'), 'pricf')).toBe(false);
  });

  it('refuses text of U+10FFFF only', () => {
    expect(() => prefixEnd('\u{10FFFF}')).toThrow();
  });
});

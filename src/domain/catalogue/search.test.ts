import { describe, expect, it } from 'vitest';
import { hasWords, searchedText } from './search.js';

describe('searchedText', () => {
  it('trims, removes NUL and keeps the first 100 characters (code points), case kept', () => {
    expect(searchedText('  Fed Rate  ')).toBe('Fed Rate');
    expect(searchedText('\0ab\0')).toBe('ab');
    expect(searchedText('x'.repeat(10_000))).toBe('x'.repeat(100));
    expect(Array.from(searchedText('😀'.repeat(150)))).toHaveLength(100);
    expect(searchedText(`${'a'.repeat(99)}  b`)).toBe('a'.repeat(99));
  });
});

describe('hasWords', () => {
  it('needs a letter or a digit', () => {
    expect(hasWords('fed #12')).toBe(true);
    expect(hasWords('é')).toBe(true);
    expect(hasWords('%%')).toBe(false);
    expect(hasWords("' --")).toBe(false);
  });
});

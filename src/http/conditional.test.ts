import { describe, expect, it } from 'vitest';
import { noneMatch } from './conditional.js';

describe('noneMatch (If-None-Match on a GET)', () => {
  const tag = '"1b-FeBDPE95Bgrit"';
  it.each([
    [tag, true],
    [`"x", ${tag}`, true],
    [` W/${tag} `, true],
    ['*', true],
    ['"x"', false],
    ['', false],
    ['"1b-FeBDPE95Bgri"', false],
  ])('%j: %s', (header, expected) => {
    expect(noneMatch(header, tag)).toBe(expected);
  });
  it('is false without the header, and compares a weak tag by value', () => {
    expect(noneMatch(undefined, tag)).toBe(false);
    expect(noneMatch(tag, `W/${tag}`)).toBe(true);
  });
});

import fc from 'fast-check';
import { createRequire } from 'node:module';
import { describe, expect, it } from 'vitest';
import { parseQuery } from './query.js';

/** What Koa's `ctx.query` returns for a query string (koa/lib/request.js: `sp.parse(this.querystring)`). */
const koaParse = (createRequire(import.meta.url)('koa/lib/search-params') as { parse: (query: string) => Record<string, unknown> }).parse;

function expectSameAsKoa(querystring: string): void {
  const actual = parseQuery(querystring);
  const expected = koaParse(querystring);
  expect(actual).toStrictEqual(expected);
  expect(Object.keys(actual)).toEqual(Object.keys(expected));
  expect(Object.getPrototypeOf(actual)).toBe(Object.getPrototypeOf(expected));
}

describe('parseQuery parses as Koa does', () => {
  it.each([
    '',
    'limit=20&status=open',
    'a=1&a=2&b&a=3',
    '?a=1',
    '??a=1',
    'a=1&&b=2&',
    '=x&a==b',
    '__proto__=x&constructor=y&toString=z',
    'q=a+b%20c&%E0%A4=bad&x=%zz',
    'name=%C3%A9t%C3%A9&raw=\u00e9',
    'lone=\ud800&ok=1',
  ])('%j', (querystring) => expectSameAsKoa(querystring));

  it('parses generated query strings as Koa does', () => {
    const piece = fc.constantFrom('a', 'b', '__proto__', '=', '&', '?', '+', '%', '%2', '%20', '%E9', '%C3%A9', '\u00e9', '\ud83d', '\ud83d\ude00', 'x');
    fc.assert(
      fc.property(fc.array(piece, { maxLength: 12 }), (pieces) => expectSameAsKoa(pieces.join(''))),
      { numRuns: 3000 },
    );
  });
});

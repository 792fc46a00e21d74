import type { OpenAPIV3 } from 'openapi-types';
import { describe, expect, it } from 'vitest';
import { joinDescriptions } from './descriptions.js';

const ok = { description: 'ok' };

function doc(operations: Record<string, Record<string, unknown>>): OpenAPIV3.Document {
  const paths = Object.fromEntries(Object.entries(operations).map(([path, operation]) => [path, { get: { responses: { 200: ok }, ...operation } }]));
  return { openapi: '3.0.3', info: { title: 't', version: '1' }, paths };
}

const description = (document: OpenAPIV3.Document, path: string) => document.paths[path]?.get?.description;

describe('joinDescriptions', () => {
  it("makes the shared text a paragraph before or after the operation's own, and removes the extensions", () => {
    const rule = 'The rule:\n\n1. one;\n2. two.\n';
    const document = doc({
      '/after': { description: 'Own text.\n', 'x-description-after': rule },
      '/before': { description: 'Own text.', 'x-description-before': rule },
      '/both': { description: 'Middle.\n', 'x-description-before': 'First.\n', 'x-description-after': 'Last.\n' },
      '/alone': { 'x-description-after': rule },
      '/plain': { description: 'Untouched.\n' },
    });
    expect(joinDescriptions(document)).toEqual([]);
    expect(description(document, '/after')).toBe('Own text.\n\nThe rule:\n\n1. one;\n2. two.\n');
    expect(description(document, '/before')).toBe('The rule:\n\n1. one;\n2. two.\n\nOwn text.');
    expect(description(document, '/both')).toBe('First.\n\nMiddle.\n\nLast.\n');
    expect(description(document, '/alone')).toBe(rule);
    expect(description(document, '/plain')).toBe('Untouched.\n');
    for (const path of ['/after', '/before', '/both', '/alone']) {
      expect(Object.keys(document.paths[path]?.get ?? {}).filter((key) => key.startsWith('x-description'))).toEqual([]);
    }
  });

  it('refuses shared text that is not text (a $ref the bundler did not read)', () => {
    const document = doc({ '/a': { description: 'Own.', 'x-description-after': { $ref: 'missing.md' } } });
    expect(joinDescriptions(document)).toEqual(['GET /a: x-description-before and x-description-after must be text (a $ref to a Markdown file)']);
  });
});

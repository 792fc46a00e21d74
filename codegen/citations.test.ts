import { describe, expect, it } from 'vitest';
import { findCitations } from './citations.js';

// Built from pieces, so that this file does not break the rule it tests.
const spec = 'specification';
const design = ['DESIGN', 'md'].join('.');
const shared = ['..', 'shared'].join('/');

describe('findCitations', () => {
  it('lists each citation of an outside document with its file and line', () => {
    const text = [
      'Clean line.',
      `The order record (${spec} 2.1).`,
      `Offset lists scan at most this many rows (${spec}, section 8).`,
      `The heartbeat table of ${spec} section 3.`,
      `See ${design} "Trading".`,
      `import { x } from '${shared}/types';`,
    ].join('\n');
    expect(findCitations('src/a.ts', text)).toEqual([
      `src/a.ts:2: cites a numbered section of an outside specification: "${spec} 2.1"`,
      `src/a.ts:3: cites a numbered section of an outside specification: "${spec}, section 8"`,
      `src/a.ts:4: cites a numbered section of an outside specification: "${spec} section 3"`,
      `src/a.ts:5: cites an outside design document: "${design}"`,
      `src/a.ts:6: cites a path outside the repository: "${shared}"`,
    ]);
  });

  it('lets the word and the names through when they cite nothing', () => {
    expect(findCitations('README.md', `The OpenAPI ${spec} describes it; DESIGN notes; src/shared; design.md`)).toEqual([]);
  });
});

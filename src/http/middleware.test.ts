import { describe, expect, it } from 'vitest';
import { traceIdOf } from './middleware.js';

describe('traceIdOf (W3C traceparent)', () => {
  const id = '4bf92f3577b34da6a3ce929d0e0e4736';
  it.each([
    `00-${id}-00f067aa0ba902b7-01`,
    `00-${id}-00f067aa0ba902b7-00`,
    // a later version may append fields
    `01-${id}-00f067aa0ba902b7-01-extra`,
    ` 00-${id}-00f067aa0ba902b7-01 `,
  ])('takes the trace id of %j', (header) => {
    expect(traceIdOf(header)).toBe(id);
  });
  it.each([
    undefined,
    '',
    'garbage',
    `ff-${id}-00f067aa0ba902b7-01`,
    `00-${'0'.repeat(32)}-00f067aa0ba902b7-01`,
    `00-${id}-${'0'.repeat(16)}-01`,
    `00-${id.toUpperCase()}-00f067aa0ba902b7-01`,
    `00-${id}-00f067aa0ba902b7`,
    [`00-${id}-00f067aa0ba902b7-01`],
  ])('makes a new one for %j', (header) => {
    const made = traceIdOf(header);
    expect(made).toMatch(/^[0-9a-f]{32}$/);
    expect(made).not.toBe(id);
    expect(traceIdOf(header as string | undefined)).not.toBe(made);
  });
  it('makes distinct ones across many requests (its random bytes drawn in blocks)', () => {
    const made = new Set(Array.from({ length: 2_000 }, () => traceIdOf(undefined)));
    expect(made.size).toBe(2_000);
    for (const traceId of made) expect(traceId).toMatch(/^[0-9a-f]{32}$/);
  });
});

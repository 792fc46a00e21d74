import { describe, expect, it } from 'vitest';
import { offsetWindow } from './offset.js';

describe('offsetWindow', () => {
  it.each([
    [0, 20, { offset: 0, limit: 20 }],
    [9_990, 20, { offset: 9_990, limit: 10 }],
    [10_000, 20, { offset: 10_000, limit: 0 }],
    [2 ** 40, 100, { offset: 10_000, limit: 0 }],
  ])('offset %i limit %i', (offset, limit, expected) => {
    expect(offsetWindow(offset, limit)).toEqual(expected);
  });
});

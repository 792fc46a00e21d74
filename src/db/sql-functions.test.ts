import { describe, expect, it } from 'vitest';
import { sqlFunctions } from './sql-functions.js';

describe('SQL function files', () => {
  it('each create or replace the one function their name names', () => {
    const files = sqlFunctions();
    expect(files.length).toBeGreaterThan(0);
    for (const { name, sql } of files) {
      const creates = [...sql.matchAll(/\bcreate\s+(or\s+replace\s+)?function\s+(\w+)\s*\(/gi)];
      expect(creates.map((c) => [Boolean(c[1]), c[2]]), name).toEqual([[true, name]]);
    }
  });

  it('have a checksum of their text, so that any change re-creates the function', () => {
    const checksums = sqlFunctions().map((f) => f.checksum);
    expect(new Set(checksums).size).toBe(checksums.length);
    for (const checksum of checksums) expect(checksum).toMatch(/^[0-9a-f]{64}$/);
  });
});

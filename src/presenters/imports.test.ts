import { readdir, readFile } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const here = path.dirname(fileURLToPath(import.meta.url));

describe('presenters', () => {
  it('take the domain types only: no presenter imports from src/db', async () => {
    const files = (await readdir(here)).filter((file) => file.endsWith('.ts') && !file.endsWith('.test.ts'));
    const offending: string[] = [];
    for (const file of files) {
      const text = await readFile(path.join(here, file), 'utf8');
      for (const match of text.matchAll(/from '(\.\.\/db\/[^']*)'/g)) offending.push(`${file}: ${match[1]}`);
    }
    expect(files.length).toBeGreaterThan(0);
    expect(offending).toEqual([]);
  });
});

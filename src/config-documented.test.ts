import { readdir, readFile } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { loadConfig } from './config.js';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');

async function sources(dir: string): Promise<string[]> {
  const entries = await readdir(path.join(root, dir), { recursive: true, withFileTypes: true });
  return Promise.all(
    entries
      .filter((entry) => entry.isFile() && entry.name.endsWith('.ts') && !entry.name.endsWith('.test.ts'))
      .map((entry) => path.join(entry.parentPath, entry.name))
      .filter((file) => !file.includes(`${path.sep}generated${path.sep}`))
      .map((file) => readFile(file, 'utf8')),
  );
}

/** Names read from an environment object: `env.NAME`, `process.env.NAME`, `env['NAME']`, and `(env, 'NAME'` handed to config's readers. */
const ENV_READS = [/\benv\??\.([A-Z][A-Z0-9_]*)\b/g, /\benv\[\s*'([A-Z][A-Z0-9_]*)'\s*\]/g, /\(env, '([A-Z][A-Z0-9_]*)'/g];

function namesRead(texts: string[]): Set<string> {
  return new Set(texts.flatMap((text) => ENV_READS.flatMap((pattern) => [...text.matchAll(pattern)].map((match) => match[1]!))));
}

/** Settings the service reads: written out in its sources, or looked up by loadConfig from its tables. */
async function settingsRead(): Promise<Set<string>> {
  const read = namesRead(await sources('src'));
  loadConfig(
    new Proxy({}, {
      get: (_, key) => {
        if (typeof key === 'string') read.add(key);
        return undefined;
      },
    }),
  );
  return read;
}

/** The variables named in the first cell of a doc's `| variable | default | meaning |` tables. */
async function settingsDocumented(doc: string): Promise<Set<string>> {
  const documented = new Set<string>();
  let inTable = false;
  for (const line of (await readFile(path.join(root, doc), 'utf8')).split('\n')) {
    if (/^\| variable \|/.test(line)) inTable = true;
    else if (!line.startsWith('|')) inTable = false;
    else if (inTable) for (const match of line.split('|')[1]!.matchAll(/`([A-Z][A-Z0-9_]*)`/g)) documented.add(match[1]!);
  }
  return documented;
}

function difference(a: Set<string>, b: Set<string>): string[] {
  return [...a].filter((name) => !b.has(name)).sort();
}

describe('documented settings', () => {
  it('docs/operations.md lists every setting the service reads, and none it does not', async () => {
    const read = await settingsRead();
    const documented = await settingsDocumented('docs/operations.md');
    expect(read.size).toBeGreaterThan(40);
    expect({ readButNotDocumented: difference(read, documented), documentedButNotRead: difference(documented, read) }).toEqual({
      readButNotDocumented: [],
      documentedButNotRead: [],
    });
  });

  it('docs/performance.md lists every BENCH_ setting the benchmarks read, and none they do not', async () => {
    const read = new Set([...namesRead(await sources('bench'))].filter((name) => name.startsWith('BENCH_')));
    const documented = new Set([...(await settingsDocumented('docs/performance.md'))].filter((name) => name.startsWith('BENCH_')));
    expect(read.size).toBeGreaterThan(0);
    expect({ readButNotDocumented: difference(read, documented), documentedButNotRead: difference(documented, read) }).toEqual({
      readButNotDocumented: [],
      documentedButNotRead: [],
    });
  });
});

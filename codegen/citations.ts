import { readdir, readFile } from 'node:fs/promises';
import path from 'node:path';

/**
 * The repository stands alone: its code, tests and documentation state each rule themselves (or link to
 * docs/), and never cite documents that live elsewhere, by section number, by file name or by a path out
 * of the repository. The patterns are built from pieces so that this file does not match them itself.
 */
const CITATIONS: Array<[RegExp, string]> = [
  [new RegExp(['specification', String.raw`,?\s+(section\s+)?\d+(\.\d+)*`].join(''), 'i'), 'a numbered section of an outside specification'],
  [new RegExp(['DESIGN', 'md'].join(String.raw`\.`)), 'an outside design document'],
  [new RegExp([String.raw`\.\.`, 'shared'].join('/')), 'a path outside the repository'],
];

/** Where the rule looks, relative to the repository root; generated and installed files are left out. */
export const CITATION_SCOPE = ['openapi', 'src', 'docs', 'README.md', 'codegen', 'test', 'contract-tests', 'bench'];
const SKIPPED = new Set(['node_modules', 'dist', 'generated']);
const TEXT = /\.(ts|mts|cts|js|mjs|cjs|json|ya?ml|md|sql|txt)$/;

async function textFilesUnder(root: string, relative: string): Promise<string[]> {
  const entries = await readdir(path.join(root, relative), { withFileTypes: true }).catch((error: NodeJS.ErrnoException) => {
    if (error.code === 'ENOTDIR') return undefined;
    if (error.code === 'ENOENT') return [];
    throw error;
  });
  if (!entries) return TEXT.test(relative) ? [relative] : [];
  const nested = await Promise.all(
    entries.filter((entry) => !SKIPPED.has(entry.name)).map((entry) => textFilesUnder(root, path.join(relative, entry.name))),
  );
  return nested.flat();
}

/** The citations of one file's text, as `file:line: cites <what>: "<text>"`. */
export function findCitations(file: string, text: string): string[] {
  const problems: string[] = [];
  text.split('\n').forEach((line, index) => {
    for (const [pattern, what] of CITATIONS) {
      const match = pattern.exec(line);
      if (match) problems.push(`${file}:${index + 1}: cites ${what}: "${match[0]}"`);
    }
  });
  return problems;
}

/** Every citation in the files of CITATION_SCOPE under `root`. */
export async function findCitationProblems(root: string): Promise<string[]> {
  const files = (await Promise.all(CITATION_SCOPE.map((relative) => textFilesUnder(root, relative)))).flat().sort();
  const problems = await Promise.all(files.map(async (file) => findCitations(file, await readFile(path.join(root, file), 'utf8'))));
  return problems.flat();
}

/**
 * npm run codegen: openapi/ source -> bundled document, TypeScript types, operation table,
 * precompiled request validators; then checks that src/handlers serves exactly the document's operations.
 * Exits non-zero with one line per problem.
 */
import { createHash } from 'node:crypto';
import { mkdir, readdir, readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const out = {
  document: path.join(root, 'openapi/dist/openapi.json'),
  types: path.join(root, 'src/generated/api-types.ts'),
  operations: path.join(root, 'src/generated/operations.ts'),
  validators: path.join(root, 'src/generated/request-validators.cjs'),
  stamp: path.join(root, 'src/generated/.inputs-sha256'),
};

/** What the output depends on: the document's source, the generator, the handlers it checks, the locked versions. */
const INPUTS = ['openapi/openapi.yaml', 'openapi/paths', 'openapi/components', 'codegen', 'src/handlers', 'package-lock.json'];

async function filesUnder(relative: string): Promise<string[]> {
  const absolute = path.join(root, relative);
  const entries = await readdir(absolute, { withFileTypes: true }).catch(() => undefined);
  if (!entries) return [relative];
  const nested = await Promise.all(entries.map((entry) => filesUnder(path.join(relative, entry.name))));
  return nested.flat();
}

async function inputsHash(): Promise<string> {
  const files = (await Promise.all(INPUTS.map(filesUnder))).flat().sort();
  const hash = createHash('sha256');
  for (const file of files) hash.update(`${file}\0`).update(await readFile(path.join(root, file))).update('\0');
  return hash.digest('hex');
}

/** `--if-stale` (npm start): nothing to do when every output exists and was made from these very inputs. */
async function upToDate(hash: string): Promise<boolean> {
  const stamp = await readFile(out.stamp, 'utf8').catch(() => '');
  if (stamp.trim() !== hash) return false;
  const present = await Promise.all([out.document, out.types, out.operations, out.validators].map((file) => readFile(file).then(() => true, () => false)));
  return present.every(Boolean);
}

function fail(title: string, problems: string[]): never {
  console.error(`codegen: ${title}\n${problems.map((p) => `  - ${p}`).join('\n')}`);
  process.exit(1);
}

async function main(): Promise<void> {
  const hash = await inputsHash();
  if (process.argv.includes('--if-stale') && (await upToDate(hash))) {
    console.log('codegen: generated files are up to date');
    return;
  }
  // The generator itself is loaded only when there is something to generate (it takes seconds to load).
  const [{ bundleDocument, validateDocument }, { emitOperationTable, emitTypes }, { listOperations }, { findContractProblems, findHandlerProblems }, { emitRequestValidators }] =
    await Promise.all([import('./bundle.js'), import('./emit.js'), import('./operations.js'), import('./rules.js'), import('./validators.js')]);
  const doc = await bundleDocument(path.join(root, 'openapi/openapi.yaml')).catch((error: Error) => fail('the OpenAPI source cannot be bundled', error.message.split('\n')));
  const contractProblems = findContractProblems(doc);
  if (contractProblems.length > 0) fail('the OpenAPI document breaks the project rules', contractProblems);
  await validateDocument(doc).catch((error: Error) => fail('the bundled document is not valid OpenAPI', [error.message]));

  const operations = listOperations(doc);
  await mkdir(path.dirname(out.document), { recursive: true });
  await mkdir(path.dirname(out.types), { recursive: true });
  await writeFile(out.document, `${JSON.stringify(doc, null, 2)}\n`);
  await writeFile(out.types, await emitTypes(doc));
  await writeFile(out.operations, emitOperationTable(operations));
  await writeFile(out.validators, await emitRequestValidators(doc));

  // Imported only now: the registry's types come from the files written above.
  const { handlers } = await import('../src/handlers/index.js');
  const handlerProblems = findHandlerProblems(
    operations.map((op) => op.handler),
    Object.keys(handlers),
  );
  if (handlerProblems.length > 0) fail('handlers and operations disagree', handlerProblems);
  // A rule about prose: checked by `npm run codegen` (and so by npm test), not when a build or a start
  // regenerates stale files, and last, so that the generated files are in place even while it fails.
  const { CITATION_SCOPE, findCitationProblems } = await import('./citations.js');
  const citations = process.argv.includes('--if-stale') ? [] : await findCitationProblems(root);
  if (citations.length > 0) {
    fail(
      `${citations.length} citation(s) of documents outside the repository (in ${CITATION_SCOPE.join(', ')}): state the rule itself, or link to a file under docs/ (the generated files were written)`,
      citations,
    );
  }
  await writeFile(out.stamp, `${hash}\n`);
  console.log(`codegen: ${operations.length} operations, ${new Set(operations.map((o) => o.handler)).size} handlers`);
}

await main();

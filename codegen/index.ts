/**
 * npm run codegen: openapi/ source -> bundled document, TypeScript types, operation table,
 * precompiled request validators; then checks that src/handlers serves exactly the document's operations.
 * Exits non-zero with one line per problem.
 */
import { mkdir, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { bundleDocument, validateDocument } from './bundle.js';
import { emitOperationTable, emitTypes } from './emit.js';
import { listOperations } from './operations.js';
import { findContractProblems, findHandlerProblems } from './rules.js';
import { emitRequestValidators } from './validators.js';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const out = {
  document: path.join(root, 'openapi/dist/openapi.json'),
  types: path.join(root, 'src/generated/api-types.ts'),
  operations: path.join(root, 'src/generated/operations.ts'),
  validators: path.join(root, 'src/generated/request-validators.cjs'),
};

function fail(title: string, problems: string[]): never {
  console.error(`codegen: ${title}\n${problems.map((p) => `  - ${p}`).join('\n')}`);
  process.exit(1);
}

async function main(): Promise<void> {
  const doc = await bundleDocument(path.join(root, 'openapi/openapi.yaml'));
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
  console.log(`codegen: ${operations.length} operations, ${new Set(operations.map((o) => o.handler)).size} handlers`);
}

await main();

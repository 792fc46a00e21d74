import { bundle, loadConfig } from '@redocly/openapi-core';
import SwaggerParser from '@apidevtools/swagger-parser';
import type { OpenAPIV3 } from 'openapi-types';
import { expandAliases } from './aliases.js';
import { applyCatalogueCaching } from './catalogue-caching.js';
import { joinDescriptions } from './descriptions.js';
import { applySecurity } from './security.js';
import { applySharedResponses } from './shared-responses.js';

/**
 * Bundles the split source into one document: every file referenced from a path lands under the root
 * `components` (Dredd and most generators want one self-contained file with named components), and every
 * `x-aliases` is expanded (see aliases.ts), after every operation has been given the security its budget and
 * API key scope imply (security.ts), every catalogue read its caching
 * (catalogue-caching.ts), every operation the shared refusals it can answer (shared-responses.ts) and the
 * shared prose it names (descriptions.ts).
 */
export async function bundleDocument(rootFile: string): Promise<OpenAPIV3.Document> {
  const config = await loadConfig({});
  const result = await bundle({ ref: rootFile, config, dereference: false });
  const problems = result.problems.filter((p) => p.severity === 'error');
  if (problems.length > 0) {
    throw new Error(`bundling ${rootFile} failed:\n${problems.map((p) => `- ${p.message}`).join('\n')}`);
  }
  const doc = result.bundle.parsed as OpenAPIV3.Document;
  // Aliases last: they copy what the steps before give their originals.
  const steps: Array<[string, (doc: OpenAPIV3.Document) => string[]]> = [
    ['the security cannot be added', applySecurity],
    ['the catalogue reads cannot be given their caching', applyCatalogueCaching],
    ['the shared responses cannot be added', applySharedResponses],
    ['the shared descriptions cannot be joined', joinDescriptions],
    ['the aliases cannot be expanded', expandAliases],
  ];
  for (const [failure, step] of steps) {
    const found = step(doc);
    if (found.length > 0) throw new Error(`${rootFile}: ${failure}:\n${found.map((p) => `- ${p}`).join('\n')}`);
  }
  return doc;
}

/** Validates against the OpenAPI 3.0 schema; swagger-parser mutates its input, so it gets a copy. */
export async function validateDocument(doc: OpenAPIV3.Document): Promise<void> {
  await SwaggerParser.validate(structuredClone(doc) as never);
}

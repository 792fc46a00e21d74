/**
 * npm run codegen:surface: writes the surface of the served document (see surface.ts) to
 * codegen/client-surface.json. Run it only when a change to the API is intended, and review the diff:
 * `codegen/surface.test.ts` fails whenever the served document's surface differs from this file.
 */
import { readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import type { OpenAPIV3 } from 'openapi-types';
import { clientSurface, SERVED_DOCUMENT } from './surface.js';

const SURFACE_SNAPSHOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), 'client-surface.json');

const surface = await clientSurface(JSON.parse(await readFile(SERVED_DOCUMENT, 'utf8')) as OpenAPIV3.Document);
await writeFile(SURFACE_SNAPSHOT, `${JSON.stringify(surface, null, 2)}\n`);
console.log(`codegen: wrote ${surface.length} lines of the served document's surface to ${path.basename(SURFACE_SNAPSHOT)}`);

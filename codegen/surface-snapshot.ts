/**
 * npm run codegen:surface: writes the client surface of the document (see surface.ts) to
 * codegen/client-surface.json. Run it only when a change to the API is intended, and review the diff:
 * `codegen/surface.test.ts` fails whenever the bundled document's surface differs from this file.
 */
import { writeFile } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { bundleDocument } from './bundle.js';
import { clientSurface } from './surface.js';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const SURFACE_SNAPSHOT = path.join(root, 'codegen/client-surface.json');

const surface = clientSurface(await bundleDocument(path.join(root, 'openapi/openapi.yaml')));
await writeFile(SURFACE_SNAPSHOT, `${JSON.stringify(surface, null, 2)}\n`);
console.log(`codegen: wrote the surface of ${Object.keys(surface.operations).length} operations to ${path.relative(root, SURFACE_SNAPSHOT)}`);

import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import type { OpenAPIV3 } from 'openapi-types';
import { expect, it } from 'vitest';
import { clientSurface, SERVED_DOCUMENT } from './surface.js';

/**
 * The served document (openapi/dist/openapi.json, as `npm run codegen` writes it) has exactly the surface recorded
 * in codegen/client-surface.json: a change to how the source or the generator writes it must not change it. An
 * intended API change updates the record with `npm run codegen:surface`, and its diff shows what changed.
 */
it('the served document has the recorded surface', async () => {
  const document = await readFile(SERVED_DOCUMENT, 'utf8').catch(() => {
    throw new Error(`${SERVED_DOCUMENT} is missing: run npm run codegen first`);
  });
  const recorded = JSON.parse(await readFile(path.join(path.dirname(fileURLToPath(import.meta.url)), 'client-surface.json'), 'utf8')) as string[];
  expect(await clientSurface(JSON.parse(document) as OpenAPIV3.Document)).toEqual(recorded);
}, 60_000);

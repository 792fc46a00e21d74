import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { beforeAll, describe, expect, it } from 'vitest';
import { bundleDocument } from './bundle.js';
import { clientSurface, type ClientSurface } from './surface.js';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');

/**
 * The bundled document offers clients exactly the surface recorded in codegen/client-surface.json: a change
 * to how the source is written (aliases, shared files) must not change it. An intended API change updates the
 * record with `npm run codegen:surface`, and its diff shows what clients will see.
 */
describe('the client surface of the bundled document', () => {
  let actual: ClientSurface;
  let recorded: ClientSurface;
  beforeAll(async () => {
    actual = clientSurface(await bundleDocument(path.join(root, 'openapi/openapi.yaml')));
    recorded = JSON.parse(await readFile(path.join(root, 'codegen/client-surface.json'), 'utf8')) as ClientSurface;
  }, 60_000);

  it('has the recorded operations (method and path)', () => {
    expect(Object.keys(actual.operations)).toEqual(Object.keys(recorded.operations));
  });

  it('gives each operation its recorded operationId, extensions, parameters, body, responses and security', () => {
    for (const [route, operation] of Object.entries(recorded.operations)) {
      expect(actual.operations[route], route).toEqual(operation);
    }
  });

  it('has the recorded named schemas', () => {
    expect(Object.keys(actual.schemas)).toEqual(Object.keys(recorded.schemas));
    for (const [name, schema] of Object.entries(recorded.schemas)) expect(actual.schemas[name], name).toEqual(schema);
  });
});

import type { OpenAPIV3 } from 'openapi-types';
import { listOperations, resolveRef } from './operations.js';

/**
 * What a client of the bundled document depends on, independent of how the source is written: for every
 * operation its method, path, operationId, extensions (`x-handler`, `x-rate-limit`, ...), parameters
 * (name, location, required, schema, style), request body, responses (status, content schemas, headers)
 * and security; and every named schema. Prose (summaries, descriptions, examples) is left out, and so are
 * the names of parameter and response components, which no generated client exposes.
 *
 * `codegen/surface.test.ts` compares the document against `codegen/client-surface.json`, written by
 * `npm run codegen:surface` when the API is meant to change.
 */
export interface ClientSurface {
  operations: Record<string, unknown>;
  schemas: Record<string, unknown>;
}

/** Keys that describe a thing to people; they change without changing what a client sends or receives. */
const PROSE = new Set(['summary', 'description', 'example', 'examples', 'externalDocs']);

function extensionsOf(node: object): Record<string, unknown> {
  return Object.fromEntries(Object.entries(node).filter(([key]) => key.startsWith('x-')).sort(([a], [b]) => a.localeCompare(b)));
}

/** Maps whose keys are names chosen by the API (a property may well be called `description`). */
const NAMED_MAPS = new Set(['properties', 'content', 'headers', 'mapping']);

/** Copies a JSON value without its prose and with object keys in sorted order. */
function plain(value: unknown, named = false): unknown {
  if (Array.isArray(value)) return value.map((item) => plain(item));
  if (!value || typeof value !== 'object') return value;
  return Object.fromEntries(
    Object.entries(value)
      .filter(([key]) => named || !PROSE.has(key))
      .sort(([a], [b]) => a.localeCompare(b))
      .map(([key, inner]) => [key, plain(inner, !named && NAMED_MAPS.has(key))]),
  );
}

export function clientSurface(doc: OpenAPIV3.Document): ClientSurface {
  const operations: Record<string, unknown> = {};
  for (const op of listOperations(doc)) {
    const parameters = [...(op.pathItem.parameters ?? []), ...(op.operation.parameters ?? [])]
      .map((raw) => resolveRef(doc, raw))
      .map((parameter) => plain({ ...parameter, schema: parameter.schema }))
      .sort((a, b) => JSON.stringify(a).localeCompare(JSON.stringify(b)));
    const requestBody = op.operation.requestBody ? plain(resolveRef(doc, op.operation.requestBody)) : undefined;
    const responses = Object.fromEntries(
      Object.entries(op.operation.responses ?? {})
        .sort(([a], [b]) => a.localeCompare(b))
        .map(([status, raw]) => {
          const response = resolveRef(doc, raw);
          const headers = Object.fromEntries(Object.entries(response.headers ?? {}).map(([name, header]) => [name, plain(resolveRef(doc, header))]));
          return [status, plain({ content: response.content ?? {}, headers })];
        }),
    );
    operations[`${op.method.toUpperCase()} ${op.path}`] = {
      operationId: op.operationId,
      extensions: extensionsOf(op.operation),
      tags: op.operation.tags ?? [],
      parameters,
      requestBody,
      responses,
      security: op.operation.security ?? doc.security ?? [],
    };
  }
  const sortedOperations = Object.fromEntries(Object.entries(operations).sort(([a], [b]) => a.localeCompare(b)));
  const schemas = Object.fromEntries(
    Object.entries(doc.components?.schemas ?? {})
      .sort(([a], [b]) => a.localeCompare(b))
      .map(([name, schema]) => [name, plain(schema)]),
  );
  return { operations: sortedOperations, schemas };
}

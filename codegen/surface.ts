import { createHash } from 'node:crypto';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import SwaggerParser from '@apidevtools/swagger-parser';
import type { OpenAPIV3 } from 'openapi-types';
import { HTTP_METHODS, listOperations, resolveRef } from './operations.js';

/** The document the service serves, as codegen writes it. */
export const SERVED_DOCUMENT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../openapi/dist/openapi.json');

/** The first 12 hex digits of the SHA-256 of the value's JSON with object keys in code-point order. */
const hash = (value: unknown) =>
  createHash('sha256')
    .update(JSON.stringify(value ?? null, (_, v: unknown) => (v && typeof v === 'object' && !Array.isArray(v) ? Object.fromEntries(Object.entries(v).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))) : v)))
    .digest('hex')
    .slice(0, 12);
const schemaName = (schema: unknown) => (schema && typeof schema === 'object' && '$ref' in schema ? String(schema.$ref).split('/').pop() : '-');

/**
 * The served document as lines, one per fact a client can depend on, every part of the document in one of them:
 * - per operation, `<METHOD> <path> <operationId>` then `operation` (everything but its parameters, body and
 *   responses, path-level fields included), `parameters` (path and operation parameters, dereferenced, by
 *   location and name) and `body <media types>` (the request body);
 * - per response and media type, `<status> <media type or -> <schema's component name or -> schema:<hash> response:<hash>`:
 *   the fully dereferenced schema, and the rest of the response (description, headers, examples);
 * - `schema <name>` per named schema (dereferenced), and one line per other top-level or `components` part.
 * Hashes are of key-sorted JSON, so that how the source is written (aliases, shared files, key order, `$ref`
 * or inline) changes nothing while any change to what is served changes a line.
 * `codegen/surface.test.ts` compares the document with `codegen/client-surface.json`, written by
 * `npm run codegen:surface` when the API is meant to change.
 */
export async function clientSurface(doc: OpenAPIV3.Document): Promise<string[]> {
  const raw = listOperations(doc);
  const dereferenced = (await SwaggerParser.dereference(structuredClone(doc) as never)) as OpenAPIV3.Document;
  const ops = listOperations(dereferenced);
  const lines: string[] = [];
  ops.forEach(({ method, path: route, operationId, operation, pathItem }, i) => {
    const at = `${method.toUpperCase()} ${route} ${operationId}`;
    const { parameters, requestBody, responses, ...rest } = operation;
    const pathLevel = Object.fromEntries(Object.entries(pathItem).filter(([key]) => key !== 'parameters' && !(HTTP_METHODS as readonly string[]).includes(key)));
    const byKey = new Map([...(pathItem.parameters ?? []), ...(parameters ?? [])].map((p) => [`${(p as OpenAPIV3.ParameterObject).in} ${(p as OpenAPIV3.ParameterObject).name}`, p]));
    lines.push(`${at} operation ${hash({ ...rest, pathLevel })}`, `${at} parameters ${hash([...byKey].sort(([a], [b]) => (a < b ? -1 : 1)))}`);
    const body = requestBody as OpenAPIV3.RequestBodyObject | undefined;
    if (body) lines.push(`${at} body ${Object.keys(body.content).join(',')} ${hash(body)}`);
    for (const [status, response] of Object.entries(responses as Record<string, OpenAPIV3.ResponseObject>)) {
      const rawContent = resolveRef<OpenAPIV3.ResponseObject | undefined>(doc, raw[i]?.operation.responses[status])?.content ?? {};
      const { content, ...others } = response;
      const media = Object.entries(content ?? {});
      if (media.length === 0) lines.push(`${at} ${status} - - schema:- response:${hash(others)}`);
      for (const [type, { schema, ...mediaRest }] of media) {
        lines.push(`${at} ${status} ${type} ${schemaName(rawContent[type]?.schema)} schema:${hash(schema)} response:${hash({ ...others, mediaRest })}`);
      }
    }
  });
  const { schemas, ...otherComponents } = doc.components ?? {};
  lines.push(...Object.keys(schemas ?? {}).sort().map((name) => `schema ${name} ${hash(dereferenced.components?.schemas?.[name])}`));
  const others = [...Object.entries(doc).filter(([key]) => key !== 'paths' && key !== 'components'), ...Object.entries(otherComponents).map(([key, value]) => [`components.${key}`, value] as const)];
  lines.push(...others.map(([key, value]) => `${key} ${hash(value)}`).sort());
  return lines;
}

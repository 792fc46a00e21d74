import type { OpenAPIV3 } from 'openapi-types';
import { isPublic } from './shared-responses.js';

/** The tags of the public catalogue's operations (native and compatibility shapes). */
const CATALOGUE_TAGS = ['catalogue', 'compat'];

const IF_NONE_MATCH = '#/components/parameters/IfNoneMatch';
const NOT_MODIFIED = '#/components/responses/NotModified';
const HEADERS = { ETag: '#/components/headers/ETag', 'Cache-Control': '#/components/headers/CacheControlCatalogue' };

/**
 * Public catalogue reads (GET, no token, tagged catalogue or compat) are revalidated as the service serves them:
 * the 200 carries `ETag` and `Cache-Control`, the request may send `If-None-Match`, and the answer may be 304.
 * Written here, when the document is bundled, rather than in each of those operations' source; one that writes
 * any of it itself is refused, so that it stays written once. Returns one readable line per problem.
 */
export function applyCatalogueCaching(doc: OpenAPIV3.Document): string[] {
  const needed = [IF_NONE_MATCH, NOT_MODIFIED, ...Object.values(HEADERS)];
  const problems = needed.filter((ref) => !hasComponent(doc, ref)).map((ref) => `${ref.slice(2).replaceAll('/', '.')} is missing`);
  for (const [path, item] of Object.entries(doc.paths ?? {})) {
    const operation = item?.get;
    if (!operation || !isPublic(operation, doc) || !operation.tags?.some((tag) => CATALOGUE_TAGS.includes(tag))) continue;
    const where = `GET ${path}`;
    const parameters = (operation.parameters ??= []);
    const ok = operation.responses['200'];
    if (parameters.some((parameter) => '$ref' in parameter && parameter.$ref === IF_NONE_MATCH) || operation.responses['304'] !== undefined || (ok && !('$ref' in ok) && ok.headers?.ETag)) {
      problems.push(`${where}: If-None-Match, ETag and 304 are added to catalogue reads when the document is bundled; remove them from the source`);
      continue;
    }
    if (!ok || '$ref' in ok) {
      problems.push(`${where}: a catalogue read writes its 200 response inline, to be given its caching headers`);
      continue;
    }
    parameters.push({ $ref: IF_NONE_MATCH });
    const { description, headers, ...rest } = ok;
    const added = Object.fromEntries(Object.entries(HEADERS).map(([name, $ref]) => [name, { $ref }]));
    operation.responses['200'] = { description, headers: { ...added, ...headers }, ...rest };
    operation.responses['304'] = { $ref: NOT_MODIFIED };
  }
  return problems;
}

function hasComponent(doc: OpenAPIV3.Document, ref: string): boolean {
  const [, , kind, name] = ref.split('/');
  return (doc.components as Record<string, Record<string, unknown> | undefined> | undefined)?.[kind ?? '']?.[name ?? ''] !== undefined;
}

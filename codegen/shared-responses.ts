import type { OpenAPIV3 } from 'openapi-types';
import { HTTP_METHODS } from './operations.js';

type Operation = OpenAPIV3.OperationObject & Record<`x-${string}`, unknown>;

/** A refusal the service can answer on many operations, written once as a component of `#/components/responses`. */
interface SharedResponse {
  status: string;
  component: string;
  /** Whether the operation (of this path item, at this path of this document) can answer it. */
  when: (operation: Operation, pathItem: OpenAPIV3.PathItemObject, doc: OpenAPIV3.Document, path: string) => boolean;
}

const readsBody = (operation: Operation): boolean => operation.requestBody !== undefined;

/** Needs no token: no security requirement, or an empty one among them. */
export function isPublic(operation: OpenAPIV3.OperationObject, doc: OpenAPIV3.Document): boolean {
  const security = operation.security ?? doc.security ?? [];
  return security.length === 0 || security.some((requirement) => Object.keys(requirement).length === 0);
}

/**
 * The refusals that follow from what the document already says of an operation: the body limits where a body
 * is read; text the database cannot store wherever a parameter or body carries some; a missing or bad token
 * where one is needed; a role or key scope lacking where one is named (`x-required-role`, `x-api-key-scope`);
 * nothing found where the path names something (a path parameter); the request budget (`x-rate-limit`); and
 * everywhere, the header block's size and the database out of reach (503 with Retry-After).
 */
export const SHARED_RESPONSES: readonly SharedResponse[] = [
  { status: '400', component: 'BadRequest', when: (operation, item) => readsBody(operation) || (item.parameters?.length ?? 0) + (operation.parameters?.length ?? 0) > 0 },
  { status: '401', component: 'Unauthorized', when: (operation, _item, doc) => !isPublic(operation, doc) },
  { status: '403', component: 'Forbidden', when: (operation) => operation['x-required-role'] !== undefined || operation['x-api-key-scope'] !== undefined },
  { status: '404', component: 'NotFound', when: (_operation, _item, _doc, path) => path.includes('{') },
  { status: '408', component: 'RequestTimeout', when: readsBody },
  { status: '413', component: 'PayloadTooLarge', when: readsBody },
  { status: '415', component: 'UnsupportedMediaType', when: readsBody },
  { status: '429', component: 'TooManyRequests', when: (operation) => operation['x-rate-limit'] !== undefined },
  { status: '431', component: 'HeaderFieldsTooLarge', when: () => true },
  { status: '503', component: 'ServiceUnavailable', when: () => true },
];

/**
 * Gives every operation the shared responses it can answer (a `$ref` to the component), when the document is
 * bundled, rather than in every operation's source. An operation that writes its own response for such a
 * status keeps it; one that writes the shared `$ref` itself is refused, so that each stays written once.
 * Returns one readable line per problem.
 */
export function applySharedResponses(doc: OpenAPIV3.Document, table: readonly SharedResponse[] = SHARED_RESPONSES): string[] {
  const problems = table
    .filter(({ component }) => doc.components?.responses?.[component] === undefined)
    .map(({ status, component }) => `components.responses.${component} (the shared ${status}) is missing`);
  for (const [path, item] of Object.entries(doc.paths ?? {})) {
    if (!item) continue;
    for (const method of HTTP_METHODS) {
      const operation = item[method] as Operation | undefined;
      if (!operation) continue;
      const responses = (operation.responses ??= {}) as Record<string, OpenAPIV3.ReferenceObject | OpenAPIV3.ResponseObject>;
      for (const { status, component, when } of table) {
        if (!when(operation, item, doc, path)) continue;
        const $ref = `#/components/responses/${component}`;
        const own = responses[status];
        if (own === undefined) responses[status] = { $ref };
        else if ('$ref' in own && own.$ref === $ref) problems.push(`${method.toUpperCase()} ${path}: response ${status} is added when the document is bundled; remove it from the source`);
      }
      operation.responses = Object.fromEntries(Object.entries(responses).sort(([a], [b]) => a.localeCompare(b)));
    }
  }
  return problems;
}

import { isDeepStrictEqual } from 'node:util';
import type { OpenAPIV3 } from 'openapi-types';
import { HTTP_METHODS } from './operations.js';

/** The two signature schemes, as requirement objects name them (every header of a scheme required together). */
export const SIGNED_REQUIREMENTS = [
  ['kalshiAccessKey', 'kalshiAccessTimestamp', 'kalshiAccessSignature'],
  ['polyAddress', 'polyApiKey', 'polyPassphrase', 'polyTimestamp', 'polySignature'],
];

/** The request budgets of callers without a token: public reads, and signing in or up. */
export const TOKENLESS_BUDGETS = ['public-reads', 'login', 'registration'];

type Operation = OpenAPIV3.OperationObject & Record<`x-${string}`, unknown>;

/** The security an operation's extensions imply, or undefined when it takes the document's (the session token). */
function impliedSecurity(operation: Operation): OpenAPIV3.SecurityRequirementObject[] | undefined {
  if (TOKENLESS_BUDGETS.includes(operation['x-rate-limit'] as string)) return [];
  if (operation['x-api-key-scope'] === undefined) return undefined;
  return [{ bearerAuth: [] }, ...SIGNED_REQUIREMENTS.map((schemes) => Object.fromEntries(schemes.map((scheme) => [scheme, []])))];
}

/**
 * Each operation's `security`, written here when the document is bundled rather than in every operation's
 * source: none on the budgets of callers without a token (`x-rate-limit` public-reads, login, registration);
 * with the scope an API key needs (`x-api-key-scope`), the session token or either signature scheme; else the
 * document's, the session token. One that writes what would be implied is refused, so that it stays written
 * once. Returns one readable line per problem.
 */
export function applySecurity(doc: OpenAPIV3.Document): string[] {
  const problems: string[] = [];
  for (const [path, item] of Object.entries(doc.paths ?? {})) {
    for (const method of HTTP_METHODS) {
      const operation: Operation | undefined = item?.[method];
      const implied = operation && impliedSecurity(operation);
      if (!operation || implied === undefined) continue;
      if (operation.security === undefined) operation.security = implied;
      else if (isDeepStrictEqual(operation.security, implied)) problems.push(`${method.toUpperCase()} ${path}: security is added when the document is bundled; remove it from the source`);
    }
  }
  return problems;
}

import type { OpenAPIV3 } from 'openapi-types';

/** The two signature schemes, as requirement objects name them (every header of a scheme required together). */
export const SIGNED_REQUIREMENTS = [
  ['kalshiAccessKey', 'kalshiAccessTimestamp', 'kalshiAccessSignature'],
  ['polyAddress', 'polyApiKey', 'polyPassphrase', 'polyTimestamp', 'polySignature'],
];

const METHODS = ['get', 'put', 'post', 'delete', 'options', 'head', 'patch', 'trace'] as const;

/**
 * An operation that names the scope an API key needs (`x-api-key-scope`) accepts the session token or either
 * signature scheme: its `security` is written here, when the document is bundled, rather than in every
 * operation's source. An operation that writes its own `security` keeps it (codegen's rules check it).
 */
export function applyApiKeySecurity(doc: OpenAPIV3.Document): void {
  const security = [{ bearerAuth: [] }, ...SIGNED_REQUIREMENTS.map((schemes) => Object.fromEntries(schemes.map((scheme) => [scheme, []])))];
  for (const item of Object.values(doc.paths ?? {})) {
    for (const method of METHODS) {
      const operation: (OpenAPIV3.OperationObject & { 'x-api-key-scope'?: unknown }) | undefined = item?.[method];
      if (operation?.['x-api-key-scope'] !== undefined && operation.security === undefined) operation.security = structuredClone(security);
    }
  }
}

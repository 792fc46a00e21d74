import type { OpenAPIV3 } from 'openapi-types';

/** What the HTTP layers around the dispatcher (CORS, caching, metrics) need to know of an operation. */
export interface OperationFacts {
  operationId: string;
  method: string;
  /** The document's path template, e.g. /api/events/{event_ticker}. */
  path: string;
  /** Needs no token (no security requirement, or an empty one). */
  public: boolean;
  hasBody: boolean;
  /** Names of its header parameters and of the headers its security schemes read (API keys), lower case. */
  headers: string[];
  /** Documents 304: a public catalogue read, whose 200 carries an ETag to revalidate with. */
  revalidates: boolean;
}

const METHODS = ['get', 'put', 'post', 'delete', 'options', 'head', 'patch', 'trace'] as const;

function resolve<T>(document: OpenAPIV3.Document, item: T | OpenAPIV3.ReferenceObject): T {
  let current: unknown = item;
  for (let hops = 0; hops < 8 && current && typeof current === 'object' && '$ref' in current; hops += 1) {
    const pointer = String((current as OpenAPIV3.ReferenceObject).$ref).replace(/^#\//, '').split('/');
    current = pointer.reduce<unknown>((node, key) => (node as Record<string, unknown>)?.[key.replace(/~1/g, '/').replace(/~0/g, '~')], document);
  }
  return current as T;
}

/** Every operation of the bundled document, in document order. */
export function operationFactsOf(document: object): OperationFacts[] {
  const doc = document as OpenAPIV3.Document;
  const facts: OperationFacts[] = [];
  for (const [path, rawItem] of Object.entries(doc.paths ?? {})) {
    const item = resolve<OpenAPIV3.PathItemObject>(doc, rawItem as OpenAPIV3.PathItemObject);
    if (!item) continue;
    for (const method of METHODS) {
      const operation = item[method];
      if (!operation?.operationId) continue;
      const security = operation.security ?? doc.security ?? [];
      const parameters = [...(item.parameters ?? []), ...(operation.parameters ?? [])].map((p) => resolve<OpenAPIV3.ParameterObject>(doc, p));
      const schemeHeaders = security.flatMap((requirement) =>
        Object.keys(requirement).flatMap((name) => {
          const scheme = doc.components?.securitySchemes?.[name] as OpenAPIV3.SecuritySchemeObject | undefined;
          return scheme?.type === 'apiKey' && scheme.in === 'header' ? [scheme.name.toLowerCase()] : [];
        }),
      );
      facts.push({
        operationId: operation.operationId,
        method: method.toUpperCase(),
        path,
        public: security.length === 0 || security.some((requirement) => Object.keys(requirement).length === 0),
        hasBody: operation.requestBody !== undefined,
        headers: [...new Set([...parameters.filter((p) => p?.in === 'header').map((p) => p.name.toLowerCase()), ...schemeHeaders])],
        revalidates: operation.responses?.['304'] !== undefined,
      });
    }
  }
  return facts;
}

/**
 * Finds the path template of a request path: exact paths by lookup, templated ones by their compiled
 * patterns, literal segments winning over parameters (as the dispatcher's router does).
 */
export class PathMatcher<T> {
  private readonly exact = new Map<string, T>();
  private readonly templated: Array<{ pattern: RegExp; literals: number; value: T }> = [];

  constructor(entries: Iterable<[string, T]>) {
    for (const [path, value] of entries) {
      if (!path.includes('{')) {
        this.exact.set(path, value);
        continue;
      }
      const segments = path.split('/');
      const source = segments.map((segment) => (/^\{[^}]+\}$/.test(segment) ? '[^/]+' : segment.replace(/[.*+?^${}()|[\]\\]/g, '\\$&'))).join('/');
      this.templated.push({ pattern: new RegExp(`^${source}$`), literals: segments.filter((segment) => !segment.startsWith('{')).length, value });
    }
    this.templated.sort((a, b) => b.literals - a.literals);
  }

  match(path: string): T | undefined {
    const trimmed = path.length > 1 && path.endsWith('/') ? path.slice(0, -1) : path;
    const exact = this.exact.get(trimmed);
    if (exact !== undefined) return exact;
    return this.templated.find((entry) => entry.pattern.test(trimmed))?.value;
  }
}

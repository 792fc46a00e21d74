import type { OpenAPIV3 } from 'openapi-types';

export const HTTP_METHODS = ['get', 'put', 'post', 'delete', 'patch', 'head', 'options', 'trace'] as const;

/** One operation of the document with the extensions the service reads. */
export interface OperationInfo {
  operationId: string;
  method: (typeof HTTP_METHODS)[number];
  path: string;
  /** The implementation that serves it: `x-handler`, or the operationId itself. */
  handler: string;
  /** `x-required-role`: the account role the operation needs beyond a valid token. */
  requiredRole?: string;
  /** Query parameters whose values are clamped, from `x-clamp-maximum`. */
  clampMaxima: Record<string, number>;
  /** `x-rate-limit`: the request budget the operation draws on. */
  rateLimit?: 'public-reads' | 'private-reads' | 'order-writes' | 'login' | 'registration';
  /** `x-rate-limit-count`: the request body's array whose items the request draws from its budget, one each. */
  rateLimitCount?: string;
  /** `x-api-key-scope`: the scope an API key needs for the operation (which then accepts signed requests). */
  apiKeyScope?: 'read' | 'trade';
  operation: OpenAPIV3.OperationObject;
  pathItem: OpenAPIV3.PathItemObject;
}

type WithExtensions<T> = T & Record<`x-${string}`, unknown>;

/** Follows a local `#/components/...` reference of the bundled document. */
export function resolveRef<T>(doc: OpenAPIV3.Document, value: T | OpenAPIV3.ReferenceObject): T {
  let current: unknown = value;
  for (let depth = 0; depth < 20 && current && typeof current === 'object' && '$ref' in current; depth += 1) {
    const ref = (current as OpenAPIV3.ReferenceObject).$ref;
    if (!ref.startsWith('#/')) throw new Error(`unresolvable reference ${ref}`);
    current = ref
      .slice(2)
      .split('/')
      .map((part) => part.replace(/~1/g, '/').replace(/~0/g, '~'))
      .reduce<unknown>((node, key) => (node as Record<string, unknown> | undefined)?.[key], doc);
  }
  return current as T;
}

export function listOperations(doc: OpenAPIV3.Document): OperationInfo[] {
  const result: OperationInfo[] = [];
  for (const [path, pathItem] of Object.entries(doc.paths ?? {})) {
    if (!pathItem) continue;
    for (const method of HTTP_METHODS) {
      const operation = pathItem[method] as WithExtensions<OpenAPIV3.OperationObject> | undefined;
      if (!operation) continue;
      const clampMaxima: Record<string, number> = {};
      for (const raw of [...(pathItem.parameters ?? []), ...(operation.parameters ?? [])]) {
        const parameter = resolveRef(doc, raw) as WithExtensions<OpenAPIV3.ParameterObject>;
        const maximum = parameter['x-clamp-maximum'];
        if (parameter.in === 'query' && typeof maximum === 'number') clampMaxima[parameter.name] = maximum;
      }
      result.push({
        operationId: operation.operationId ?? '',
        method,
        path,
        handler: typeof operation['x-handler'] === 'string' ? operation['x-handler'] : (operation.operationId ?? ''),
        requiredRole: typeof operation['x-required-role'] === 'string' ? operation['x-required-role'] : undefined,
        clampMaxima,
        rateLimit: typeof operation['x-rate-limit'] === 'string' ? (operation['x-rate-limit'] as OperationInfo['rateLimit']) : undefined,
        rateLimitCount: typeof operation['x-rate-limit-count'] === 'string' ? operation['x-rate-limit-count'] : undefined,
        apiKeyScope: typeof operation['x-api-key-scope'] === 'string' ? (operation['x-api-key-scope'] as OperationInfo['apiKeyScope']) : undefined,
        operation,
        pathItem,
      });
    }
  }
  return result;
}

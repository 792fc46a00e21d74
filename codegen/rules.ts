import type { OpenAPIV3 } from 'openapi-types';
import { listOperations, resolveRef } from './operations.js';
import { SIGNED_REQUIREMENTS } from './security.js';

/** Verbs an operationId may start with (verbNoun, e.g. `listCompatEvents`). */
const VERBS = [
  'get', 'list', 'create', 'update', 'delete', 'cancel', 'preview', 'decrease', 'search', 'count',
  'register', 'login', 'logout', 'place', 'send', 'check', 'close', 'resolve', 'start', 'renew',
];
const OPERATION_ID = new RegExp(`^(${VERBS.join('|')})[A-Z][A-Za-z0-9]*$`);

/**
 * The project's own contract rules, on top of OpenAPI validity. Each problem is one readable line.
 * They keep the document usable by client generators and by Dredd, and the handler registry sound.
 */
export function findContractProblems(doc: OpenAPIV3.Document): string[] {
  const problems: string[] = [];
  const operations = listOperations(doc);
  const byId = new Map<string, string[]>();
  for (const op of operations) {
    const where = `${op.method.toUpperCase()} ${op.path}`;
    if (!op.operationId) {
      problems.push(`${where}: has no operationId`);
      continue;
    }
    byId.set(op.operationId, [...(byId.get(op.operationId) ?? []), where]);
    if (!OPERATION_ID.test(op.operationId)) {
      problems.push(`${where}: operationId '${op.operationId}' is not verbNoun (verbs: ${VERBS.join(', ')})`);
    }
    if (!op.operation.summary) problems.push(`${where}: has no summary`);
    problems.push(...rateLimitProblems(op, where));
    problems.push(...rateLimitCountProblems(doc, op, where));
    problems.push(...apiKeyProblems(doc, op, where));
    for (const [status, raw] of Object.entries(op.operation.responses ?? {})) {
      const response = resolveRef(doc, raw);
      const media = Object.values(response?.content ?? {});
      // 304 Not Modified has no body by definition (RFC 9110)
      if (status === '304') {
        if (media.length > 0) problems.push(`${where}: response 304 must have no content`);
        continue;
      }
      if (media.length === 0 || media.some((m) => !m.schema)) {
        problems.push(`${where}: response ${status} has no schema`);
      }
    }
    for (const raw of [...(op.pathItem.parameters ?? []), ...(op.operation.parameters ?? [])]) {
      const parameter = resolveRef(doc, raw);
      if (parameter.required && parameter.example === undefined && parameter.examples === undefined) {
        problems.push(`${where}: required parameter '${parameter.name}' has no example (Dredd builds requests from it)`);
      }
      const schema = parameter.schema ? resolveRef(doc, parameter.schema) : undefined;
      if ((parameter as { 'x-clamp-maximum'?: unknown })['x-clamp-maximum'] !== undefined && schema?.maximum !== undefined) {
        problems.push(`${where}: parameter '${parameter.name}' is clamped, so it must not declare maximum`);
      }
    }
  }
  for (const [operationId, places] of byId) {
    if (places.length > 1) problems.push(`operationId '${operationId}' is used ${places.length} times: ${places.join(', ')}`);
  }
  for (const op of operations) {
    if (op.handler !== op.operationId && !byId.has(op.handler)) {
      problems.push(`${op.method.toUpperCase()} ${op.path}: x-handler '${op.handler}' names no operation`);
    }
  }
  return problems;
}


/**
 * API keys: an operation with `x-api-key-scope` (read or trade) accepts the bearer token and both signature
 * schemes, each as one security requirement (its 403, a key without the scope, is a shared response); an
 * operation without it names no signature scheme (account and admin operations take the session token only).
 */
function apiKeyProblems(doc: OpenAPIV3.Document, op: ReturnType<typeof listOperations>[number], where: string): string[] {
  const security = op.operation.security ?? doc.security ?? [];
  const requirements = security.map((requirement) => Object.keys(requirement).sort().join(' '));
  const signed = SIGNED_REQUIREMENTS.map((schemes) => [...schemes].sort().join(' '));
  const namesSignature = security.some((requirement) => Object.keys(requirement).some((scheme) => SIGNED_REQUIREMENTS.flat().includes(scheme)));
  if (op.apiKeyScope === undefined) {
    const raw = (op.operation as Record<string, unknown>)['x-api-key-scope'];
    if (raw !== undefined) return [`${where}: x-api-key-scope must be read or trade`];
    return namesSignature ? [`${where}: names a signature scheme in security without x-api-key-scope`] : [];
  }
  const problems: string[] = [];
  if (!['read', 'trade'].includes(op.apiKeyScope)) problems.push(`${where}: x-api-key-scope must be read or trade`);
  for (const wanted of ['bearerAuth', ...signed]) {
    if (!requirements.includes(wanted)) problems.push(`${where}: with x-api-key-scope, security must list the requirement {${wanted.split(' ').join(', ')}}`);
  }
  if (requirements.length !== 1 + signed.length) problems.push(`${where}: with x-api-key-scope, security lists exactly bearerAuth and the two signature schemes`);
  return problems;
}

const RATE_LIMIT_CLASSES = ['public-reads', 'private-reads', 'order-writes', 'login', 'registration'];

/** Every operation draws on one request budget, named by `x-rate-limit` (its 429 is added at bundling). */
function rateLimitProblems(op: ReturnType<typeof listOperations>[number], where: string): string[] {
  const limit = (op.operation as Record<string, unknown>)['x-rate-limit'];
  if (typeof limit === 'string' && RATE_LIMIT_CLASSES.includes(limit)) return [];
  return [`${where}: x-rate-limit must name its request budget (${RATE_LIMIT_CLASSES.join(', ')})`];
}

/**
 * `x-rate-limit-count: <property>`: the request draws one unit of its budget per item of that array of its
 * JSON body, so the property must be a required array of the body's schema, with a maximum (maxItems) that
 * bounds what one request can take. `/` names the body itself, which must then be such an array.
 */
/** The `x-rate-limit-count` that names the request body itself. */
const BODY = '/';

function rateLimitCountProblems(doc: OpenAPIV3.Document, op: ReturnType<typeof listOperations>[number], where: string): string[] {
  const name = (op.operation as Record<string, unknown>)['x-rate-limit-count'];
  if (name === undefined) return [];
  if (typeof name !== 'string' || name === '') return [`${where}: x-rate-limit-count must name a property of the request body`];
  const body = op.operation.requestBody ? resolveRef(doc, op.operation.requestBody) : undefined;
  const media = body?.content?.['application/json'];
  const schema = media?.schema ? resolveRef(doc, media.schema) : undefined;
  const property = name === BODY ? schema : schema?.properties?.[name] ? resolveRef(doc, schema.properties[name]) : undefined;
  if (!body?.required || (name !== BODY && !schema?.required?.includes(name)) || property?.type !== 'array' || typeof property.maxItems !== 'number') {
    return [`${where}: x-rate-limit-count '${name}' must name a required array property, with maxItems, of the required JSON request body`];
  }
  return [];
}

/** Compares the handlers the document needs with those the code registers. */
export function findHandlerProblems(needed: Iterable<string>, registered: Iterable<string>): string[] {
  const neededSet = new Set(needed);
  const registeredSet = new Set(registered);
  const problems: string[] = [];
  for (const name of neededSet) {
    if (!registeredSet.has(name)) problems.push(`operation handler '${name}' is not implemented in src/handlers`);
  }
  for (const name of registeredSet) {
    if (!neededSet.has(name)) problems.push(`handler '${name}' in src/handlers serves no operation of the document`);
  }
  return problems;
}

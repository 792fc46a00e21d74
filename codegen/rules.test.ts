import type { OpenAPIV3 } from 'openapi-types';
import { describe, expect, it } from 'vitest';
import { listOperations } from './operations.js';
import { findContractProblems, findHandlerProblems } from './rules.js';

const ok = { description: 'ok', content: { 'application/json': { schema: { type: 'object' } } } };

/** A document of these paths, each operation drawing on a request budget (unless `bare`). */
function doc(paths: Record<string, Record<string, unknown>>, bare = false): OpenAPIV3.Document {
  if (!bare) {
    for (const item of Object.values(paths)) {
      for (const operation of Object.values(item) as Array<Record<string, unknown> | undefined>) {
        if (operation && typeof operation === 'object' && 'responses' in operation) operation['x-rate-limit'] ??= 'public-reads';
      }
    }
  }
  return { openapi: '3.0.3', info: { title: 't', version: '1' }, paths };
}

describe('findContractProblems: API keys, budgets and shared refusals', () => {
  it('holds an operation taking API keys to its scope, all three requirements; and the others to no signature scheme', () => {
    const signed = [{ bearerAuth: [] }, { kalshiAccessKey: [], kalshiAccessTimestamp: [], kalshiAccessSignature: [] }, { polyAddress: [], polyApiKey: [], polyPassphrase: [], polyTimestamp: [], polySignature: [] }];
    const problems = findContractProblems(
      doc({
        '/good': { get: { operationId: 'getGood', summary: 's', 'x-api-key-scope': 'read', security: signed, responses: { 200: ok } } },
        '/half': { get: { operationId: 'getHalf', summary: 's', 'x-api-key-scope': 'trade', security: signed.slice(0, 2), responses: { 200: ok } } },
        '/scope': { get: { operationId: 'getScope', summary: 's', 'x-api-key-scope': 'admin', security: signed, responses: { 200: ok } } },
        '/stray': { get: { operationId: 'getStray', summary: 's', security: signed, responses: { 200: ok } } },
      }),
    );
    expect(problems).toEqual([
      'GET /half: with x-api-key-scope, security must list the requirement {polyAddress, polyApiKey, polyPassphrase, polySignature, polyTimestamp}',
      'GET /half: with x-api-key-scope, security lists exactly bearerAuth and the two signature schemes',
      'GET /scope: x-api-key-scope must be read or trade',
      'GET /stray: names a signature scheme in security without x-api-key-scope',
    ]);
  });

  it('refuses an operation without its budget class', () => {
    const operation = (limit?: string) => ({ operationId: 'createThing', summary: 's', 'x-rate-limit': limit, responses: { 201: ok } });
    const message = 'POST /a: x-rate-limit must name its request budget (public-reads, private-reads, order-writes, login, registration)';
    expect(findContractProblems(doc({ '/a': { post: operation('everything') } }, true))).toEqual([message]);
    expect(findContractProblems(doc({ '/a': { post: operation() } }, true))).toEqual([message]);
    expect(findContractProblems(doc({ '/a': { post: operation('order-writes') } }, true))).toEqual([]);
  });

  it('refuses an x-rate-limit-count that names no required, bounded array of the required JSON body', () => {
    const body = (schema: unknown, required = true) => ({ required, content: { 'application/json': { schema } } });
    const counted = { type: 'object', required: ['items'], properties: { items: { type: 'array', maxItems: 20, items: { type: 'object' } } } };
    const operation = (requestBody: unknown, name: unknown = 'items') => ({ operationId: 'placeThings', summary: 's', 'x-rate-limit-count': name, requestBody, responses: { 201: ok } });
    expect(findContractProblems(doc({ '/a': { post: operation(body(counted)) } }))).toEqual([]);
    const refused = (op: Record<string, unknown>) => findContractProblems(doc({ '/a': { post: op } }));
    const message = "POST /a: x-rate-limit-count 'items' must name a required array property, with maxItems, of the required JSON request body";
    expect(refused(operation(body(counted, false)))).toEqual([message]);
    expect(refused(operation(body({ ...counted, required: [] })))).toEqual([message]);
    expect(refused(operation(body({ ...counted, properties: { items: { type: 'array', items: {} } } })))).toEqual([message]);
    expect(refused(operation(body({ ...counted, properties: { items: { type: 'string', maxLength: 3 } } })))).toEqual([message]);
    expect(refused(operation(body(counted), 7))).toEqual(['POST /a: x-rate-limit-count must name a property of the request body']);
    // `/`: the body itself is the array.
    expect(refused(operation(body(counted.properties.items), '/'))).toEqual([]);
    expect(refused(operation(body(counted), '/'))).toEqual(["POST /a: x-rate-limit-count '/' must name a required array property, with maxItems, of the required JSON request body"]);
    expect(refused(operation(body({ type: 'array', items: {} }), '/'))).toHaveLength(1);
  });

});

describe('findContractProblems: the document at large', () => {
  it('accepts a sound document', () => {
    expect(findContractProblems(doc({ '/a': { get: { operationId: 'listThings', summary: 's', responses: { 200: ok } } } }))).toEqual([]);
  });

  it('refuses a duplicated operationId, naming both places', () => {
    const problems = findContractProblems(
      doc({
        '/a': { get: { operationId: 'listThings', summary: 's', responses: { 200: ok } } },
        '/b': { get: { operationId: 'listThings', summary: 's', responses: { 200: ok } } },
      }),
    );
    expect(problems).toEqual(["operationId 'listThings' is used 2 times: GET /a, GET /b"]);
  });

  it('refuses a response without a schema, a missing summary, and an operationId that is not verbNoun', () => {
    const problems = findContractProblems(doc({ '/a': { get: { operationId: 'things', responses: { 200: { description: 'no body' } } } } }));
    expect(problems).toEqual([
      "GET /a: operationId 'things' is not verbNoun (verbs: get, list, create, update, delete, cancel, preview, decrease, search, count, register, login, logout, place, send, check, close, resolve, start, renew)",
      'GET /a: has no summary',
      'GET /a: response 200 has no schema',
    ]);
  });

  it('refuses a required parameter without an example, a clamped parameter with a maximum, and an alias of nothing', () => {
    const problems = findContractProblems(
      doc({
        '/a/{id}': {
          get: {
            operationId: 'getThing',
            summary: 's',
            'x-handler': 'getMissing',
            parameters: [
              { name: 'id', in: 'path', required: true, schema: { type: 'string' } },
              { name: 'limit', in: 'query', schema: { type: 'integer', maximum: 100 }, 'x-clamp-maximum': 100 },
            ],
            responses: { 200: ok },
          },
        },
      }),
    );
    expect(problems).toEqual([
      "GET /a/{id}: required parameter 'id' has no example (Dredd builds requests from it)",
      "GET /a/{id}: parameter 'limit' is clamped, so it must not declare maximum",
      "GET /a/{id}: x-handler 'getMissing' names no operation",
    ]);
  });
});

describe('listOperations', () => {
  it('reads the handler, the role and the clamped parameters', () => {
    const [alias, canonical] = listOperations(
      doc({
        '/compat/things': { get: { operationId: 'listCompatThings', 'x-handler': 'listThings', responses: {} } },
        '/things': {
          get: {
            operationId: 'listThings',
            'x-required-role': 'ADMIN',
            parameters: [{ name: 'limit', in: 'query', schema: { type: 'integer' }, 'x-clamp-maximum': 100 }],
            responses: {},
          },
        },
      }),
    );
    expect(alias).toMatchObject({ operationId: 'listCompatThings', handler: 'listThings', clampMaxima: {} });
    expect(canonical).toMatchObject({ operationId: 'listThings', handler: 'listThings', requiredRole: 'ADMIN', clampMaxima: { limit: 100 } });
  });
});

describe('findHandlerProblems', () => {
  it('names a missing handler and a handler with no operation', () => {
    expect(findHandlerProblems(['listThings', 'getThing'], ['listThings', 'deleteThing'])).toEqual([
      "operation handler 'getThing' is not implemented in src/handlers",
      "handler 'deleteThing' in src/handlers serves no operation of the document",
    ]);
  });

  it('accepts aliases sharing one handler', () => {
    expect(findHandlerProblems(['listThings', 'listThings'], ['listThings'])).toEqual([]);
  });
});

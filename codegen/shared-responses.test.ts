import type { OpenAPIV3 } from 'openapi-types';
import { describe, expect, it } from 'vitest';
import { applySharedResponses, SHARED_RESPONSES } from './shared-responses.js';

const ok = { description: 'ok' };
const body = { content: { 'application/json': { schema: { type: 'object' } } } };
const query = { name: 'q', in: 'query', schema: { type: 'string' } };
const ref = (component: string) => ({ $ref: `#/components/responses/${component}` });

function doc(paths: Record<string, unknown>, components = SHARED_RESPONSES.map((row) => row.component)): OpenAPIV3.Document {
  const responses = Object.fromEntries(components.map((name) => [name, { description: name }]));
  return { openapi: '3.0.3', info: { title: 't', version: '1' }, paths, components: { responses } } as unknown as OpenAPIV3.Document;
}

/** The statuses an operation of the document answers, in order. */
const statuses = (document: OpenAPIV3.Document, path: string, method: 'get' | 'post' = 'get') => Object.keys(document.paths[path]?.[method]?.responses ?? {});

describe('applySharedResponses', () => {
  it('adds 431 and 503 everywhere, 429 with a budget, 400 with a parameter or body, 404 with a path parameter, and 408, 413, 415 with a body', () => {
    const document = doc({
      '/bare': { get: { responses: { 200: ok } } },
      '/budget': { get: { 'x-rate-limit': 'public-reads', responses: { 200: ok } } },
      '/query': { get: { parameters: [query], responses: { 200: ok } } },
      '/item/{id}': { parameters: [{ name: 'id', in: 'path', required: true, schema: { type: 'string' } }], get: { responses: { 200: ok } } },
      '/body': { post: { 'x-rate-limit': 'order-writes', requestBody: body, responses: { 201: ok } } },
    });
    expect(applySharedResponses(document)).toEqual([]);
    expect(statuses(document, '/bare')).toEqual(['200', '431', '503']);
    expect(statuses(document, '/budget')).toEqual(['200', '429', '431', '503']);
    expect(statuses(document, '/query')).toEqual(['200', '400', '431', '503']);
    expect(statuses(document, '/item/{id}')).toEqual(['200', '400', '404', '431', '503']);
    expect(statuses(document, '/body', 'post')).toEqual(['201', '400', '408', '413', '415', '429', '431', '503']);
    expect(document.paths['/body']?.post?.responses).toMatchObject({
      400: ref('BadRequest'),
      408: ref('RequestTimeout'),
      413: ref('PayloadTooLarge'),
      415: ref('UnsupportedMediaType'),
      429: ref('TooManyRequests'),
      431: ref('HeaderFieldsTooLarge'),
      503: ref('ServiceUnavailable'),
    });
  });

  it('adds 401 where a token is needed, 403 where a role or key scope is named, and 404 where the path names something', () => {
    const document = doc({
      '/public': { get: { security: [], responses: { 200: ok } } },
      '/token': { get: { responses: { 200: ok } } },
      '/keyed': { get: { 'x-api-key-scope': 'read', responses: { 200: ok } } },
      '/admin': { get: { 'x-required-role': 'ADMIN', responses: { 200: ok } } },
      '/thing/{id}': { get: { security: [], responses: { 200: ok } } },
    });
    document.security = [{ bearerAuth: [] }];
    expect(applySharedResponses(document)).toEqual([]);
    expect(statuses(document, '/public')).toEqual(['200', '431', '503']);
    expect(statuses(document, '/token')).toEqual(['200', '401', '431', '503']);
    expect(statuses(document, '/keyed')).toEqual(['200', '401', '403', '431', '503']);
    expect(statuses(document, '/admin')).toEqual(['200', '401', '403', '431', '503']);
    expect(statuses(document, '/thing/{id}')).toEqual(['200', '404', '431', '503']);
    expect(document.paths['/keyed']?.get?.responses).toMatchObject({ 401: ref('Unauthorized'), 403: ref('Forbidden') });
  });

  it("keeps an operation's own response for a shared status", () => {
    const own = { description: 'The header block is over its own limit.' };
    const document = doc({ '/a': { get: { responses: { 200: ok, 431: own } } } });
    expect(applySharedResponses(document)).toEqual([]);
    expect(document.paths['/a']?.get?.responses['431']).toBe(own);
  });

  it('refuses an operation that writes a shared response itself', () => {
    const document = doc({ '/a': { post: { requestBody: body, responses: { 201: ok, 413: ref('PayloadTooLarge') } } } });
    expect(applySharedResponses(document)).toEqual(['POST /a: response 413 is added when the document is bundled; remove it from the source']);
  });

  it('takes one more shared response as one more row', () => {
    const table = [...SHARED_RESPONSES, { status: '507', component: 'InsufficientStorage', when: () => true }];
    const document = doc({ '/a': { get: { responses: { 200: ok } } } }, [...SHARED_RESPONSES.map((row) => row.component), 'InsufficientStorage']);
    expect(applySharedResponses(document, table)).toEqual([]);
    expect(document.paths['/a']?.get?.responses).toEqual({ 200: ok, 431: ref('HeaderFieldsTooLarge'), 503: ref('ServiceUnavailable'), 507: ref('InsufficientStorage') });
  });

  it('refuses a row whose component the document lacks', () => {
    const document = doc({ '/a': { get: { responses: { 200: ok } } } }, ['BadRequest']);
    expect(applySharedResponses(document)).toEqual([
      'components.responses.Unauthorized (the shared 401) is missing',
      'components.responses.Forbidden (the shared 403) is missing',
      'components.responses.NotFound (the shared 404) is missing',
      'components.responses.RequestTimeout (the shared 408) is missing',
      'components.responses.PayloadTooLarge (the shared 413) is missing',
      'components.responses.UnsupportedMediaType (the shared 415) is missing',
      'components.responses.TooManyRequests (the shared 429) is missing',
      'components.responses.HeaderFieldsTooLarge (the shared 431) is missing',
      'components.responses.ServiceUnavailable (the shared 503) is missing',
    ]);
  });
});

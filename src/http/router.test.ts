import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { OpenAPIRouter, OpenAPIValidator, type Document, type Operation, type Request } from 'openapi-backend';
import { CompiledRouter, PathParameterEncodingError } from './router.js';
import { CompiledValidator } from './validator.js';

const op = (operationId: string, parameters: unknown[] = []) => ({ operationId, parameters, responses: { 200: { description: 'ok' } } });
const idParam = { name: 'id', in: 'path', required: true, schema: { type: 'string' } };

/** Small, but with every case the routing rules distinguish. */
const definition = {
  openapi: '3.0.3',
  info: { title: 'routing', version: '1' },
  paths: {
    '/events': { get: op('listEvents'), post: op('createEvent') },
    '/events/{id}': { parameters: [idParam], get: op('getEvent'), delete: op('deleteEvent') },
    // declared after its template sibling: still wins, being an exact path
    '/events/keyset': { get: op('eventsKeyset') },
    '/events/{id}/markets': { get: op('eventMarkets') },
    '/events/{eventId}/markets/{ticker}': { get: op('eventMarket'), put: op('putEventMarket') },
    // the more literal template first, whatever the document order
    '/events/{id}/{kind}': { get: op('eventAnything') },
    '/events/{id}/history': { post: op('eventHistory') },
    '/series/{id}.json': { get: op('seriesJson') },
    '/series/{id}': { get: op('series') },
    '/{section}/about': { get: op('sectionAbout'), patch: op('patchSectionAbout') },
    '/files/{name}': { get: op('file') },
    // a name twice: its two values must be equal
    '/pairs/{a}/to/{a}': { get: op('pair') },
    '/': { get: op('root') },
    '/items/{n}': {
      parameters: [{ name: 'n', in: 'path', required: true, schema: { type: 'integer', minimum: 1 } }],
      get: op('getItem', [
        { name: 'limit', in: 'query', schema: { type: 'integer', minimum: 1, default: 10 } },
        { name: 'status', in: 'query', schema: { type: 'string', enum: ['open', 'closed'] } },
        { name: 'ids', in: 'query', schema: { type: 'array', items: { type: 'integer' } } },
        { name: 'x-trace', in: 'header', required: true, schema: { type: 'string', minLength: 2 } },
        { name: 'session', in: 'cookie', schema: { type: 'string' } },
      ]),
      put: {
        ...op('putItem'),
        requestBody: {
          required: true,
          content: { 'application/json': { schema: { type: 'object', required: ['name'], additionalProperties: false, properties: { name: { type: 'string' }, size: { type: 'integer' } } } } },
        },
      },
    },
    '/search': {
      get: op('search', [
        { name: 'tags', in: 'query', schema: { type: 'array', items: { type: 'string' } }, explode: false },
        { name: 'words', in: 'query', schema: { type: 'array', items: { type: 'string' } }, explode: false, style: 'spaceDelimited' },
        { name: 'pipes', in: 'query', schema: { type: 'array', items: { type: 'string' } }, explode: false, style: 'pipeDelimited' },
        { name: 'filter', in: 'query', content: { 'application/json': { schema: { type: 'object' } } } },
        { name: 'limit', in: 'query', schema: { type: 'integer' } },
      ]),
    },
  },
} as unknown as Document;

function routers(apiRoot = '/') {
  return {
    stock: new OpenAPIRouter({ definition: structuredClone(definition), apiRoot }),
    compiled: new CompiledRouter({ definition: structuredClone(definition), apiRoot }),
  };
}

/** operationId, or the error's status prefix ('404', '405'), as openapi-backend's handleRequest reads it. */
function route(router: OpenAPIRouter, method: string, path: string): string {
  try {
    return router.matchOperation({ method, path, headers: {} }, true).operationId ?? '?';
  } catch (error) {
    return (error as Error).message.slice(0, 3);
  }
}

describe('CompiledRouter matches exactly as openapi-backend', () => {
  const { stock, compiled } = routers();

  it.each([
    ['GET', '/events', 'listEvents'],
    ['POST', '/events', 'createEvent'],
    ['GET', '/events/keyset', 'eventsKeyset'],
    ['DELETE', '/events/keyset', 'deleteEvent'], // the exact path lacks DELETE: the template has it
    ['GET', '/events/e-1', 'getEvent'],
    ['GET', '/events/e-1/markets', 'eventMarkets'],
    ['GET', '/events/e-1/history', 'eventAnything'], // /history has only POST: falls to the template
    ['POST', '/events/e-1/history', 'eventHistory'],
    ['GET', '/events/e-1/other', 'eventAnything'],
    ['PUT', '/events/e-1/markets/T-1', 'putEventMarket'],
    ['GET', '/series/s1.json', 'seriesJson'],
    ['GET', '/series/s1xjson', 'series'], // '.' is literal, not any character
    ['GET', '/news/about', 'sectionAbout'],
    ['GET', '/events/about', 'getEvent'], // more literal '/events/' beats '/about'
    ['PATCH', '/events/about', 'patchSectionAbout'], // ... unless it lacks the method
    ['get', '/events/', 'listEvents'], // trailing slash ignored, method case-insensitive
    ['GET', '/events/e-1///', 'getEvent'],
    ['GET', '  /events/e-1  ', 'getEvent'],
    ['GET', 'events', 'listEvents'], // leading slash added
    ['GET', '/events?limit=1', 'listEvents'], // query string ignored
    ['GET', '/', 'root'],
    ['GET', '', 'root'],
    ['PATCH', '/events', '405'],
    ['PATCH', '/events/e-1', '405'],
    ['POST', '/series/s1.json', '405'],
    ['GET', '/nothing', '404'],
    ['GET', '/events/e-1/markets/T-1/extra', '404'],
    ['GET', '//events', '404'],
    ['GET', '/events//markets', '404'], // an empty segment is not a parameter
    ['GET', '/files/', '404'],
  ])('%s %j -> %s', (method, path, expected) => {
    expect(route(stock, method, path)).toBe(expected);
    expect(route(compiled, method, path)).toBe(expected);
  });

  it('answers undefined instead of throwing when not strict, like the stock router', () => {
    for (const path of ['/nothing', '/events']) {
      const request = { method: 'PATCH', path, headers: {} } as Request;
      expect(compiled.matchOperation(request)).toBe(stock.matchOperation(request));
    }
  });

  it('keeps getOperations, getOperation and normalizeRequest', () => {
    expect(compiled.getOperations()).toEqual(stock.getOperations());
    expect(compiled.getOperation('eventMarket')).toEqual(stock.getOperation('eventMarket'));
    expect(compiled.getOperation('nope')).toBeUndefined();
    const request = { method: ' GET ', path: 'events/1?x=1', headers: { a: '1' }, query: 'x=1', body: '{}' } as Request;
    expect(compiled.normalizeRequest(request)).toEqual(stock.normalizeRequest(request));
  });

  const segment = fc.oneof(
    fc.constantFrom('events', 'keyset', 'markets', 'history', 'series', 's1.json', 's1xjson', 'about', 'files', 'search', 'api', ''),
    fc.stringMatching(/^[a-z0-9.%{}-]{1,6}$/),
  );
  const requestArb = fc.record({
    method: fc.constantFrom('GET', 'POST', 'PUT', 'DELETE', 'PATCH', 'get', 'Head'),
    path: fc
      .tuple(fc.array(segment, { maxLength: 5 }), fc.constantFrom('', '/', '//', '?a=1'), fc.boolean())
      .map(([segments, suffix, leading]) => `${leading ? '/' : ''}${segments.join('/')}${suffix}`),
  });

  for (const apiRoot of ['/', '/api']) {
    it(`routes generated requests like the stock router (apiRoot ${apiRoot})`, () => {
      const pair = routers(apiRoot);
      fc.assert(
        fc.property(requestArb, ({ method, path }) => {
          const withRoot = apiRoot === '/' ? path : `/api${path.startsWith('/') ? '' : '/'}${path}`;
          for (const candidate of [path, withRoot]) {
            expect(route(pair.compiled, method, candidate)).toBe(route(pair.stock, method, candidate));
          }
        }),
        { numRuns: 3000 },
      );
      // 3,000 runs through the stock router, which compiles its patterns on every call: seconds on a shared machine
    }, 60_000);
  }
});

describe('CompiledRouter parses requests exactly as openapi-backend', () => {
  const { stock, compiled } = routers();
  const operation = (id: string) => stock.getOperation(id) as Operation;

  const cases: Array<[string, Request, string | undefined]> = [
    ['no operation', { method: 'GET', path: '/events/e%201', headers: { 'X-Trace': 'a', Cookie: 'a=1; b=2' }, query: { limit: '2' } }, undefined],
    ['percent-encoded path parameter', { method: 'GET', path: '/events/e%201/markets/T%2F1/', headers: {}, query: {} }, 'eventMarket'],
    ['repeated path parameter', { method: 'GET', path: '/pairs/x%20y/to/x%20y', headers: {}, query: {} }, 'pair'],
    ['repeated path parameter, two values', { method: 'GET', path: '/pairs/x/to/y', headers: {}, query: {} }, 'pair'],
    [
      'query styles',
      {
        method: 'GET',
        path: '/search',
        headers: { cookie: ['a=1', 'b=%20x'] },
        query: { tags: 'a,b%2Cc', words: 'x y%20z', pipes: 'p|q%7Cr', filter: '{"a":1}', limit: '5', other: ['1', '2'] },
      },
      'search',
    ],
    ['malformed JSON parameter, array already split', { method: 'GET', path: '/search', headers: {}, query: { filter: '{', tags: ['a', 'b'] } }, 'search'],
    ['string query', { method: 'GET', path: '/search', headers: {}, query: 'tags=a,b&limit=1' }, 'search'],
    ['query in the path', { method: 'GET', path: '/search?tags=a,b&limit=1', headers: {} }, 'search'],
    ['JSON body as text', { method: 'POST', path: '/events', headers: { 'Content-Type': 'application/json' }, body: '{"name":"x"}' }, 'createEvent'],
    ['coerced values', { method: 'GET', path: '/search', headers: {}, query: { limit: 5, tags: ['a'], flag: true } } as unknown as Request, 'search'],
    ['null-prototype query and headers', { method: 'GET', path: '/events/1', headers: Object.assign(Object.create(null) as object, { host: 'h' }), query: Object.assign(Object.create(null) as object, { __proto__: 'x', limit: '1' }) }, 'getEvent'],
    ['nested query object', { method: 'GET', path: '/search', headers: {}, query: { deep: { a: ['1'] } } } as unknown as Request, 'search'],
  ];

  it.each(cases)('%s', (_name, request, operationId) => {
    const op = operationId ? operation(operationId) : undefined;
    const expected = stock.parseRequest(structuredClone(request), op);
    const actual = compiled.parseRequest(structuredClone(request), op);
    expect(actual).toEqual(expected);
    expect(Object.keys(actual)).toEqual(Object.keys(expected));
    expect(Object.keys(actual.query as object)).toEqual(Object.keys(expected.query as object));
  });

  it('does not share the query it parses with the request', () => {
    const query = { tags: 'a,b', list: ['x'] };
    const parsed = compiled.parseRequest({ method: 'GET', path: '/search', headers: {}, query }, operation('search'));
    expect(parsed.query).not.toBe(query);
    expect((parsed.query as { list: string[] }).list).not.toBe(query.list);
    expect(query).toEqual({ tags: 'a,b', list: ['x'] });
  });

  it('names the path parameter whose percent-encoding is malformed (the stock parser throws a URIError)', () => {
    const request = { method: 'GET', path: '/events/ok/markets/%E0%A4%A', headers: {} } as Request;
    expect(() => stock.parseRequest(request, operation('eventMarket'))).toThrow(URIError);
    expect(() => compiled.parseRequest(request, operation('eventMarket'))).toThrow(PathParameterEncodingError);
    try {
      compiled.parseRequest(request, operation('eventMarket'));
    } catch (error) {
      expect((error as PathParameterEncodingError).parameter).toBe('ticker');
    }
  });

  it('parses generated requests like the stock router', () => {
    const value = fc.oneof(fc.string({ maxLength: 6 }), fc.array(fc.string({ maxLength: 4 }), { maxLength: 3 }), fc.integer());
    fc.assert(
      fc.property(
        fc.constantFrom('eventMarket', 'search', 'getEvent', 'seriesJson', 'sectionAbout', 'pair'),
        fc.array(fc.stringMatching(/^[A-Za-z0-9._~-]{1,8}$/), { minLength: 2, maxLength: 2 }),
        fc.dictionary(fc.constantFrom('tags', 'words', 'pipes', 'filter', 'limit', 'x'), value),
        fc.dictionary(fc.constantFrom('Accept', 'cookie', 'X-A', 'x-a', 'authorization'), fc.string({ maxLength: 8 })),
        (id, [a, b], query, headers) => {
          const op = operation(id);
          const path = op.path.replace(/\{[^}]+\}/, a!).replace(/\{[^}]+\}/, b!);
          const request = { method: op.method, path, headers, query } as unknown as Request;
          let expected: unknown;
          try {
            expected = stock.parseRequest(structuredClone(request), op);
          } catch (error) {
            expected = error;
          }
          if (expected instanceof Error) {
            expect(() => compiled.parseRequest(structuredClone(request), op)).toThrow();
          } else {
            expect(compiled.parseRequest(structuredClone(request), op)).toEqual(expected);
          }
        },
      ),
      { numRuns: 2000 },
    );
    // many runs through the stock implementation: seconds on a shared machine
  }, 60_000);
});

describe('CompiledValidator validates exactly as openapi-backend', () => {
  const { stock: stockRouter, compiled: compiledRouter } = routers();
  const stock = new OpenAPIValidator({ definition: structuredClone(definition), router: stockRouter, lazyCompileValidators: true, coerceTypes: true });
  const compiled = new CompiledValidator({ definition: structuredClone(definition), router: compiledRouter, lazyCompileValidators: true, coerceTypes: true });

  function compare(request: Request, operationId: string) {
    const expected = stock.validateRequest(structuredClone(request), stockRouter.getOperation(operationId));
    const actual = compiled.validateRequest(structuredClone(request), compiledRouter.getOperation(operationId));
    expect(actual).toEqual(expected);
    // the dispatcher's call: the request's own query coerced in place, same outcome
    const own = structuredClone(request);
    const outcome = compiled.validateOperation(own, compiledRouter.getOperation(operationId)!, true);
    expect(outcome.errors).toEqual(expected.errors ?? null);
    if (outcome.coerced && typeof request.query === 'object') {
      expect(outcome.query).toBe(own.query);
      expect(outcome.query).toEqual((expected.coerced as Request).query);
      expect(outcome.params).toEqual((expected.coerced as Request).params);
    }
    return actual;
  }

  it.each([
    ['valid, coerced, defaulted', { method: 'GET', path: '/items/3', headers: { 'X-Trace': 'abc', cookie: 'session=s' }, query: { status: 'open', ids: '7' } }, 'getItem', true],
    ['bad enum and minimum', { method: 'GET', path: '/items/0', headers: { 'x-trace': 'abc' }, query: { status: 'nope', limit: '0' } }, 'getItem', false],
    ['missing header', { method: 'GET', path: '/items/3', headers: {}, query: {} }, 'getItem', false],
    ['not an integer', { method: 'GET', path: '/items/x', headers: { 'x-trace': 'abc' }, query: { limit: 'abc' } }, 'getItem', false],
    ['body ok', { method: 'PUT', path: '/items/3', headers: { 'content-type': 'application/json' }, body: { name: 'a' } }, 'putItem', true],
    ['body missing', { method: 'PUT', path: '/items/3', headers: {} }, 'putItem', false],
    ['body malformed text', { method: 'PUT', path: '/items/3', headers: { 'content-type': 'application/json; charset=utf-8' }, body: '{"name":' }, 'putItem', false],
    ['body extra property', { method: 'PUT', path: '/items/3', headers: {}, body: { name: 'a', extra: 1 } }, 'putItem', false],
    ['malformed JSON query parameter', { method: 'GET', path: '/search', headers: {}, query: { filter: '{x', tags: 'a,b' } }, 'search', false],
    ['JSON query parameter of an empty JSON string', { method: 'GET', path: '/search', headers: {}, query: { filter: '""' } }, 'search', false],
  ] as Array<[string, Request, string, boolean]>)('%s', (_name, request, operationId, valid) => {
    expect(compare(request, operationId).valid).toBe(valid);
  });

  it('validates generated requests like the stock validator', () => {
    const scalar = fc.oneof(fc.constantFrom('1', '0', '-1', '2.5', 'abc', 'open', 'closed', '', '{"a":1}', 'a,b'), fc.string({ maxLength: 4 }));
    const value = fc.oneof(scalar, fc.array(scalar, { maxLength: 3 }));
    fc.assert(
      fc.property(
        fc.constantFrom('getItem', 'putItem', 'search', 'getEvent'),
        fc.oneof(fc.constantFrom('1', '0', '42', 'x', '1.5', '%20'), fc.string({ maxLength: 3 }).filter((v) => !v.includes('/') && !v.includes('%') && v.trim() === v && v !== '')),
        fc.dictionary(fc.constantFrom('limit', 'status', 'ids', 'tags', 'filter', 'other'), value),
        fc.dictionary(fc.constantFrom('x-trace', 'X-Trace', 'cookie', 'content-type', 'Content-Type'), fc.constantFrom('ab', 'a', 'session=1', 'application/json', 'text/plain')),
        fc.option(fc.oneof(fc.constantFrom('{"name":"x"}', '{', 'null'), fc.dictionary(fc.constantFrom('name', 'size', 'x'), fc.oneof(fc.string({ maxLength: 3 }), fc.integer()))), { nil: undefined }),
        (operationId, segment, query, headers, body) => {
          const operation = stockRouter.getOperation(operationId)!;
          const path = operation.path.replace(/\{[^}]+\}/g, segment);
          compare({ method: operation.method, path, headers, query, body }, operationId);
        },
      ),
      { numRuns: 1500 },
    );
    // many runs through the stock implementation: seconds on a shared machine
  }, 60_000);
});

import type { OpenAPIV3 } from 'openapi-types';
import { describe, expect, it } from 'vitest';
import { expandAliases } from './aliases.js';

const ok = { description: 'ok', content: { 'application/json': { schema: { type: 'object' } } } };

function doc(paths: Record<string, unknown>, parameters: Record<string, unknown> = {}): OpenAPIV3.Document {
  return { openapi: '3.0.3', info: { title: 't', version: '1' }, paths, components: { parameters } } as unknown as OpenAPIV3.Document;
}

describe('expandAliases: operation aliases', () => {
  it('makes each operation alias an operation of its own that the original handler serves, right after the original path', () => {
    const document = doc({
      '/things/{id}': {
        get: {
          operationId: 'getThing',
          summary: 'Get a thing',
          description: 'Reads one.',
          'x-rate-limit': 'public-reads',
          'x-aliases': [{ path: '/api/things/{id}', operationId: 'getThingAlias' }, { path: '/v2/things/{id}', operationId: 'readThing', method: 'post', description: 'For old clients.' }],
          parameters: [{ $ref: '#/components/parameters/ThingId' }],
          responses: { 200: ok },
        },
      },
      '/other': { get: { operationId: 'getOther', responses: { 200: ok } } },
    }, { ThingId: { name: 'id', in: 'path', required: true, schema: { type: 'string' } } });
    expect(expandAliases(document)).toEqual([]);
    expect(Object.keys(document.paths)).toEqual(['/things/{id}', '/api/things/{id}', '/v2/things/{id}', '/other']);
    const alias = document.paths['/api/things/{id}']?.get as Record<string, unknown>;
    expect(alias).toMatchObject({
      operationId: 'getThingAlias',
      'x-handler': 'getThing',
      'x-rate-limit': 'public-reads',
      summary: 'Get a thing (alias of GET /things/{id})',
      parameters: [{ $ref: '#/components/parameters/ThingId' }],
      responses: { 200: ok },
    });
    expect(alias['x-aliases']).toBeUndefined();
    expect(alias.description).toMatch(/^Alias of `GET \/things\/\{id\}` \(`getThing`\).*\n\nReads one\.$/s);
    const post = document.paths['/v2/things/{id}']?.post;
    expect(post?.operationId).toBe('readThing');
    expect(post?.description).toContain('For old clients.');
    expect(document.paths['/things/{id}']?.get?.description).toContain('`GET /api/things/{id}` (`getThingAlias`), `POST /v2/things/{id}` (`readThing`)');
    expect((document.paths['/things/{id}']?.get as Record<string, unknown>)['x-aliases']).toBeUndefined();
  });

  it('adds aliases of two operations of one path to one new path item', () => {
    const document = doc({
      '/a': {
        get: { operationId: 'getA', 'x-aliases': [{ path: '/b', operationId: 'getB' }], responses: { 200: ok } },
        post: { operationId: 'createA', 'x-aliases': [{ path: '/b', operationId: 'createB' }], responses: { 200: ok } },
      },
    });
    expect(expandAliases(document)).toEqual([]);
    expect(Object.keys(document.paths['/b'] ?? {})).toEqual(['get', 'post']);
  });

  it('refuses an alias whose operationId or route is taken, whose path parameters differ, or that is malformed', () => {
    const problems = expandAliases(
      doc({
        '/a/{id}': {
          get: {
            operationId: 'getA',
            'x-aliases': [
              { path: '/c/{id}', operationId: 'getC' },
              { path: '/d/{id}', operationId: 'getA' },
              { path: '/e/{name}', operationId: 'getE' },
              { path: 'f', operationId: 'getF' },
              { path: '/g/{id}', operationId: 'getG', method: 'fetch' },
            ],
            responses: { 200: ok },
          },
        },
        '/c/{id}': { get: { operationId: 'getCOriginal', responses: { 200: ok } } },
        '/h': { 'x-aliases': [{ path: '/i', operationId: 'getI' }], get: { operationId: 'getH', responses: { 200: ok } } },
      }),
    );
    expect(problems).toEqual([
      'GET /a/{id}: each x-aliases entry needs a path (starting with /) and an operationId, and may give a method (get, put, post, delete, patch, head, options, trace) and a description',
      'GET /a/{id}: each x-aliases entry needs a path (starting with /) and an operationId, and may give a method (get, put, post, delete, patch, head, options, trace) and a description',
      'GET /a/{id}: alias GET /c/{id} is already an operation',
      "GET /a/{id}: alias operationId 'getA' is already used",
      'GET /a/{id}: alias GET /e/{name} must have the same path parameters as /a/{id} (id)',
      '/h: x-aliases belongs on an operation (each alias needs its own operationId), not on the path item',
    ]);
  });

  it('refuses two aliases with one operationId', () => {
    const problems = expandAliases(
      doc({ '/a': { get: { operationId: 'getA', 'x-aliases': [{ path: '/b', operationId: 'getB' }, { path: '/c', operationId: 'getB' }], responses: { 200: ok } } } }),
    );
    expect(problems).toEqual(["GET /a: alias operationId 'getB' is already used"]);
  });

});

describe('expandAliases: parameter aliases', () => {
  it('adds a parameter per parameter alias after the original, to operations and their aliases alike', () => {
    const document = doc(
      {
        '/a': {
          get: {
            operationId: 'getA',
            'x-aliases': [{ path: '/b', operationId: 'getB' }],
            parameters: [{ $ref: '#/components/parameters/SeriesTicker' }, { name: 'q', in: 'query', 'x-aliases': ['query'], schema: { type: 'string' } }],
            responses: { 200: ok },
          },
        },
      },
      { SeriesTicker: { name: 'series_ticker', in: 'query', 'x-aliases': ['seriesTicker', 'ticker'], description: 'The series.', schema: { type: 'string' } } },
    );
    expect(expandAliases(document)).toEqual([]);
    const expected = [
      { $ref: '#/components/parameters/SeriesTicker' },
      { $ref: '#/components/parameters/SeriesTicker_seriesTicker' },
      { $ref: '#/components/parameters/SeriesTicker_ticker' },
      { name: 'q', in: 'query', schema: { type: 'string' } },
      { name: 'query', in: 'query', schema: { type: 'string' }, description: 'Alias of `q`: the same parameter under another name.' },
    ];
    expect(document.paths['/a']?.get?.parameters).toEqual(expected);
    expect(document.paths['/b']?.get?.parameters).toEqual(expected);
    expect(document.components?.parameters?.SeriesTicker_seriesTicker).toEqual({
      name: 'seriesTicker',
      in: 'query',
      description: 'Alias of `series_ticker`: the same parameter under another name. The series.',
      schema: { type: 'string' },
    });
    expect(document.components?.parameters?.SeriesTicker).not.toHaveProperty('x-aliases');
  });

  it('refuses a parameter alias that collides with another parameter, repeats, or renames a path parameter', () => {
    const problems = expandAliases(
      doc(
        {
          '/a/{id}': {
            get: {
              operationId: 'getA',
              parameters: [
                { $ref: '#/components/parameters/Ticker' },
                { name: 'tickerName', in: 'query', schema: { type: 'string' } },
                { name: 'id', in: 'path', required: true, 'x-aliases': ['ID'], schema: { type: 'string' } },
              ],
              responses: { 200: ok },
            },
          },
        },
        {
          Ticker: { name: 'ticker', in: 'query', 'x-aliases': ['tickerName'], schema: { type: 'string' } },
          Other: { name: 'other', in: 'query', 'x-aliases': ['other', 'o', 'o'], schema: { type: 'string' } },
          Bad: { name: 'bad', in: 'query', 'x-aliases': 'b', schema: { type: 'string' } },
        },
      ),
    );
    expect(problems).toEqual([
      "components.parameters.Other: x-aliases of parameter 'other' repeats 'other', 'o'",
      "components.parameters.Bad: x-aliases of parameter 'bad' must be a list of parameter names",
      "GET /a/{id}: path parameter 'id' cannot have aliases (its name is part of the path template)",
      "GET /a/{id}: query parameter 'tickerName' is declared twice (an alias collides with another parameter)",
    ]);
  });
});

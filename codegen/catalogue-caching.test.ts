import type { OpenAPIV3 } from 'openapi-types';
import { describe, expect, it } from 'vitest';
import { applyCatalogueCaching } from './catalogue-caching.js';

const ok = () => ({ description: 'ok', content: { 'application/json': { schema: { type: 'object' } } } });

function doc(paths: Record<string, unknown>): OpenAPIV3.Document {
  return {
    openapi: '3.0.3',
    info: { title: 't', version: '1' },
    security: [{ bearerAuth: [] }],
    paths,
    components: {
      parameters: { IfNoneMatch: { name: 'If-None-Match', in: 'header', schema: { type: 'string' } } },
      responses: { NotModified: { description: 'not modified' } },
      headers: { ETag: { schema: { type: 'string' } }, CacheControlCatalogue: { schema: { type: 'string' } } },
    },
  } as unknown as OpenAPIV3.Document;
}

describe('applyCatalogueCaching', () => {
  it('gives public catalogue and compat reads If-None-Match, ETag and Cache-Control on the 200, and 304', () => {
    const document = doc({
      '/native': { get: { tags: ['catalogue'], security: [], responses: { 200: ok() } } },
      '/compat': { get: { tags: ['compat'], security: [], parameters: [{ $ref: '#/components/parameters/Limit' }], responses: { 200: ok() } } },
    });
    expect(applyCatalogueCaching(document)).toEqual([]);
    for (const path of ['/native', '/compat']) {
      const operation = document.paths[path]?.get;
      expect(operation?.parameters?.at(-1)).toEqual({ $ref: '#/components/parameters/IfNoneMatch' });
      expect(operation?.responses['200']).toMatchObject({
        headers: { ETag: { $ref: '#/components/headers/ETag' }, 'Cache-Control': { $ref: '#/components/headers/CacheControlCatalogue' } },
        content: ok().content,
      });
      expect(operation?.responses['304']).toEqual({ $ref: '#/components/responses/NotModified' });
    }
  });

  it('leaves reads that need a token, other tags and other methods as they are', () => {
    const paths = {
      '/private': { get: { tags: ['catalogue'], responses: { 200: ok() } } },
      '/markets': { get: { tags: ['markets'], security: [], responses: { 200: ok() } } },
      '/write': { post: { tags: ['catalogue'], security: [], responses: { 201: ok() } } },
    };
    const document = doc(structuredClone(paths));
    expect(applyCatalogueCaching(document)).toEqual([]);
    expect(document.paths).toEqual(paths);
  });

  it('refuses a catalogue read that writes its caching itself, or whose 200 is a reference', () => {
    const document = doc({
      '/own': { get: { tags: ['catalogue'], security: [], responses: { 200: ok(), 304: { $ref: '#/components/responses/NotModified' } } } },
      '/ref': { get: { tags: ['compat'], security: [], responses: { 200: { $ref: '#/components/responses/Page' } } } },
    });
    expect(applyCatalogueCaching(document)).toEqual([
      'GET /own: If-None-Match, ETag and 304 are added to catalogue reads when the document is bundled; remove them from the source',
      'GET /ref: a catalogue read writes its 200 response inline, to be given its caching headers',
    ]);
  });

  it('refuses a document without the components it refers to', () => {
    const document = doc({});
    delete document.components?.headers;
    expect(applyCatalogueCaching(document)).toEqual(['components.headers.ETag is missing', 'components.headers.CacheControlCatalogue is missing']);
  });
});

import type { OpenAPIV3 } from 'openapi-types';
import { describe, expect, it } from 'vitest';
import { applySecurity } from './security.js';

const ok = { description: 'ok' };
const doc = (paths: Record<string, unknown>) => ({ openapi: '3.0.3', info: { title: 't', version: '1' }, security: [{ bearerAuth: [] }], paths }) as unknown as OpenAPIV3.Document;

describe('applySecurity', () => {
  it('gives the tokenless budgets no security, a key scope the token and both signature schemes, and others nothing of their own', () => {
    const document = doc({
      '/public': { get: { 'x-rate-limit': 'public-reads', responses: { 200: ok } } },
      '/login': { post: { 'x-rate-limit': 'login', responses: { 200: ok } } },
      '/keyed': { get: { 'x-rate-limit': 'private-reads', 'x-api-key-scope': 'read', responses: { 200: ok } } },
      '/account': { get: { 'x-rate-limit': 'private-reads', responses: { 200: ok } } },
    });
    expect(applySecurity(document)).toEqual([]);
    expect(document.paths['/public']?.get?.security).toEqual([]);
    expect(document.paths['/login']?.post?.security).toEqual([]);
    expect(document.paths['/keyed']?.get?.security).toEqual([
      { bearerAuth: [] },
      { kalshiAccessKey: [], kalshiAccessTimestamp: [], kalshiAccessSignature: [] },
      { polyAddress: [], polyApiKey: [], polyPassphrase: [], polyTimestamp: [], polySignature: [] },
    ]);
    expect(document.paths['/account']?.get?.security).toBeUndefined();
  });

  it('refuses an operation that writes the security it would be given, and keeps one it writes otherwise', () => {
    const own = [{ bearerAuth: [] }];
    const document = doc({
      '/public': { get: { 'x-rate-limit': 'public-reads', security: [], responses: { 200: ok } } },
      '/odd': { get: { 'x-rate-limit': 'public-reads', security: own, responses: { 200: ok } } },
    });
    expect(applySecurity(document)).toEqual(['GET /public: security is added when the document is bundled; remove it from the source']);
    expect(document.paths['/odd']?.get?.security).toBe(own);
  });
});

import { readFileSync } from 'node:fs';
import { brotliCompressSync, gzipSync } from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DOCUMENT_PATH } from '../../src/server.js';
import { TestService, type RequestOptions } from '../support/service.js';

/**
 * Schema-driven fuzzing of every operation of the bundled document: each path and query parameter and
 * each top-level body field gets hostile values (NUL, lone surrogates, 10 KB strings, wrong types,
 * malformed escapes), whole bodies of the wrong shape, and corrupt encodings (gzip, br, invalid UTF-8,
 * another media type). Nothing may answer 5xx, and every answer must be one the document describes (the
 * test client checks each against it). Bounded: a fixed set of values, a few requests at a time.
 */

const ADMIN = { email: 'fuzz-admin@dots.local', password: 'fuzz-admin-password' };
const METHODS = ['get', 'put', 'post', 'delete', 'patch'] as const;
const CONCURRENCY = 8;

type Json = any;
const document: Json = JSON.parse(readFileSync(DOCUMENT_PATH, 'utf8'));

function deref(node: Json): Json {
  let current = node;
  for (let depth = 0; current && typeof current.$ref === 'string' && depth < 20; depth += 1) {
    current = current.$ref
      .slice(2)
      .split('/')
      .map((part: string) => part.replace(/~1/g, '/').replace(/~0/g, '~'))
      .reduce((n: Json, key: string) => n?.[key], document);
  }
  return current;
}

/** Hostile values for a text position in a URL (already percent-encoded where needed). */
const URL_VALUES = [
  encodeURIComponent('a\u0000b'),
  '%00',
  '%ED%A0%80', // a UTF-16 surrogate encoded as UTF-8 (not valid UTF-8)
  '%FF',
  encodeURIComponent('x'.repeat(10 * 1024)),
  '-1',
  '0x10',
  encodeURIComponent("'; DROP TABLE users; --"),
];

/** Hostile values of a JSON body field. */
const FIELD_VALUES: Json[] = ['a\u0000b', '\ud800', 'x'.repeat(10 * 1024), -1, 1e308, true, null, [], ['\u0000'], { nested: { deeper: ['\ud800'] } }];

/** Whole bodies of the wrong shape, or sent wrongly. */
const RAW_BODIES: Array<{ what: string; options: RequestOptions }> = [
  { what: 'an array', options: { rawBody: '[]' } },
  { what: 'a string', options: { rawBody: '"text"' } },
  { what: 'a number', options: { rawBody: '12' } },
  { what: 'null', options: { rawBody: 'null' } },
  { what: 'malformed JSON', options: { rawBody: '{"a":' } },
  { what: 'a key with NUL', options: { rawBody: '{"a\\u0000":1}' } },
  { what: 'a key with a lone surrogate', options: { rawBody: '{"\\udc00":1}' } },
  { what: '__proto__', options: { rawBody: '{"__proto__":{"admin":true}}' } },
  { what: 'deep nesting', options: { rawBody: `${'['.repeat(5000)}${']'.repeat(5000)}` } },
  { what: 'invalid UTF-8', options: { rawBody: Buffer.from([0x7b, 0x22, 0x61, 0x22, 0x3a, 0x22, 0xff, 0xfe, 0x22, 0x7d]) } },
  { what: 'corrupt gzip', options: { rawBody: Buffer.from('not gzip at all'), headers: { 'content-encoding': 'gzip' } } },
  { what: 'truncated gzip', options: { rawBody: gzipSync('{"email":"a@b.c","password":"x"}').subarray(0, 12), headers: { 'content-encoding': 'gzip' } } },
  { what: 'corrupt br', options: { rawBody: Buffer.from('not brotli'), headers: { 'content-encoding': 'br' } } },
  { what: 'br of NUL text', options: { rawBody: brotliCompressSync('{"name":"\\u0000"}'), headers: { 'content-encoding': 'br' } } },
  { what: 'corrupt deflate', options: { rawBody: Buffer.from([0x78, 0x9c, 0xff, 0xff]), headers: { 'content-encoding': 'deflate' } } },
  { what: 'unknown encoding', options: { rawBody: '{}', headers: { 'content-encoding': 'zstd' } } },
  { what: 'text/plain', options: { rawBody: '{}', headers: { 'content-type': 'text/plain' } } },
  { what: 'form', options: { rawBody: 'a=b', headers: { 'content-type': 'application/x-www-form-urlencoded' } } },
];

interface Case {
  what: string;
  method: string;
  path: string;
  options: RequestOptions;
}

interface Operation {
  method: string;
  template: string;
  operation: Json;
  parameters: Json[];
  /** undefined when the operation takes no body */
  bodySchema: Json;
}

const operations: Operation[] = [];
for (const [template, item] of Object.entries<Json>(document.paths)) {
  for (const method of METHODS) {
    const operation = item[method];
    if (!operation) continue;
    const byKey = new Map<string, Json>();
    for (const raw of [...(item.parameters ?? []), ...(operation.parameters ?? [])]) {
      const parameter = deref(raw);
      byKey.set(`${parameter.in}:${parameter.name}`, parameter);
    }
    const media = operation.requestBody ? deref(operation.requestBody).content?.['application/json'] : undefined;
    operations.push({ method: method.toUpperCase(), template, operation, parameters: [...byKey.values()], bodySchema: media ? deref(media.schema) : undefined });
  }
}

function exampleOf(parameter: Json): string {
  const value = parameter.example ?? deref(parameter.schema ?? {}).example ?? 'x';
  return encodeURIComponent(Array.isArray(value) ? String(value[0]) : String(value));
}

function pathWith(op: Operation, overrides: Record<string, string> = {}): string {
  return op.template.replace(/\{([^}]+)\}/g, (_, name: string) => {
    if (name in overrides) return overrides[name]!;
    return exampleOf(op.parameters.find((p) => p.in === 'path' && p.name === name) ?? {});
  });
}

function requiredQuery(op: Operation, except?: string): string[] {
  return op.parameters.filter((p) => p.in === 'query' && p.required && p.name !== except).map((p) => `${encodeURIComponent(p.name)}=${exampleOf(p)}`);
}

/** The requests of one operation (without the token, added when sent). */
function casesOf(op: Operation): Case[] {
  const cases: Case[] = [];
  const base = (path: string, extraQuery: string[] = [], except?: string) => {
    const query = [...requiredQuery(op, except), ...extraQuery];
    return query.length > 0 ? `${path}?${query.join('&')}` : path;
  };
  const example = op.bodySchema?.example ?? {};
  // An alias shares its implementation and parameters with its operation: NUL and a bad escape suffice there.
  const values = op.operation['x-handler'] ? URL_VALUES.slice(0, 3) : URL_VALUES;
  for (const parameter of op.parameters) {
    for (const value of values) {
      if (parameter.in === 'path') cases.push({ what: `path ${parameter.name}=${value.slice(0, 20)}`, method: op.method, path: base(pathWith(op, { [parameter.name]: value })), options: { body: op.bodySchema ? example : undefined } });
      if (parameter.in === 'query') {
        const name = encodeURIComponent(parameter.name);
        cases.push({ what: `query ${parameter.name}=${value.slice(0, 20)}`, method: op.method, path: base(pathWith(op), [`${name}=${value}`], parameter.name), options: { body: op.bodySchema ? example : undefined } });
      }
    }
    if (parameter.in === 'query') {
      const name = encodeURIComponent(parameter.name);
      cases.push({ what: `query ${parameter.name} repeated`, method: op.method, path: base(pathWith(op), [`${name}=a`, `${name}=%00`, `${name}=`], parameter.name), options: {} });
    }
  }
  if (op.bodySchema) {
    const properties = Object.keys(deref(op.bodySchema).properties ?? {});
    const target = deref(op.bodySchema).type === 'array' ? undefined : example;
    for (const property of properties) {
      for (const value of FIELD_VALUES) {
        cases.push({ what: `body ${property}=${JSON.stringify(value).slice(0, 20)}`, method: op.method, path: base(pathWith(op)), options: { body: { ...(target ?? {}), [property]: value } } });
      }
    }
    if (deref(op.bodySchema).type === 'array') {
      for (const value of FIELD_VALUES) cases.push({ what: `body [${JSON.stringify(value).slice(0, 20)}]`, method: op.method, path: base(pathWith(op)), options: { body: [value] } });
    }
  }
  // Raw bodies go to every operation that reads a body; a sample to the others (which must ignore them).
  const raw = op.bodySchema ? RAW_BODIES : op.method === 'GET' ? [] : RAW_BODIES.filter((b) => ['malformed JSON', 'corrupt gzip', 'text/plain'].includes(b.what));
  for (const { what, options } of raw) cases.push({ what: `raw body: ${what}`, method: op.method, path: base(pathWith(op)), options });
  return cases;
}

let api: TestService;
let adminToken: string;
let userToken: string;

beforeAll(async () => {
  api = await TestService.start({ ADMIN_EMAIL: ADMIN.email, ADMIN_PASSWORD: ADMIN.password });
  adminToken = (await api.post('/api/auth/login', ADMIN)).body.token;
  userToken = (await api.register()).token;
});
afterAll(() => api.stop());

function needsToken(operation: Json): boolean {
  const security = operation.security ?? document.security ?? [];
  return security.length > 0 && !security.some((requirement: Json) => Object.keys(requirement).length === 0);
}

describe('schema-driven fuzzing', () => {
  it('answers every hostile request to every operation with a documented status, never 5xx', { timeout: 180_000 }, async () => {
    const all = operations.flatMap((op) => casesOf(op).map((c) => ({ op, c })));
    expect(operations.length).toBe(Object.values<Json>(document.paths).reduce((n, item) => n + METHODS.filter((m) => item[m]).length, 0));
    expect(all.length).toBeGreaterThan(2000);

    const failures: string[] = [];
    const statuses = new Map<number, number>();
    let next = 0;
    const started = Date.now();
    const worker = async () => {
      while (next < all.length) {
        const { op, c } = all[next++]!;
        let token: string | undefined;
        if (op.operation['x-required-role'] === 'ADMIN') token = adminToken;
        else if (op.operation.operationId === 'logoutAccount') token = (await api.register()).token;
        else if (needsToken(op.operation)) token = userToken;
        try {
          const response = await api.request(c.method, c.path, { ...c.options, token });
          statuses.set(response.status, (statuses.get(response.status) ?? 0) + 1);
          if (response.status >= 500) failures.push(`${c.method} ${c.path.slice(0, 120)} (${c.what}): ${response.status} ${JSON.stringify(response.body).slice(0, 200)}`);
        } catch (error) {
          failures.push(`${c.method} ${c.path.slice(0, 120)} (${c.what}): ${(error as Error).message.slice(0, 300)}`);
        }
      }
    };
    await Promise.all(Array.from({ length: CONCURRENCY }, worker));
    if (process.env.FUZZ_REPORT) console.log(`${all.length} requests in ${Date.now() - started} ms:`, Object.fromEntries(statuses));
    expect(failures.slice(0, 30), `${failures.length} of ${all.length} requests failed`).toEqual([]);
    // the fuzzing reached the checks, not only the door
    expect(statuses.get(400) ?? 0).toBeGreaterThan(all.length / 3);
  });
});

import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { catalogueOperations, insertSmallCatalogue, type CatalogueOperation, type DocumentedParameter } from '../support/catalogue.js';
import { TestService, type ApiResponse } from '../support/service.js';

/**
 * Hostile and malformed input on every parameter of every public catalogue operation, as the bundled
 * document lists them (a parameter added to the document is covered without touching this file): the
 * answer is a 400 envelope, an empty result, or (for parameters documented as having no effect) the same
 * answer as without the parameter. Never a 500, never rows that the value did not name.
 */

let api: TestService;

beforeAll(async () => {
  api = await TestService.start();
  await insertSmallCatalogue(api.db);
});
afterAll(() => api?.stop());

/** Text values: SQL and LIKE metacharacters, NUL alone and after a real name, non-ASCII, a path, 10,000 characters. */
const HOSTILE_TEXT = ["'; DROP TABLE events; --", "' or 1=1 --", '%', '_', '\\', '%00', '\0', 'zz\0q', 'SCA\0', 'sca-1\0', 'é中😀', 'a/../b', 'x'.repeat(10_000)];
/** Sent as they are: percent-escapes that are not UTF-8 (a lone byte, a cut sequence, a surrogate, an overlong form). */
const BAD_ESCAPES = ['%FF', '%E0%A4%A', '%ED%A0%80', '%C0%AF', '%'];
/** Values of integer and boolean parameters. */
const HOSTILE_NUMBER = ['abc', '1; DROP TABLE events', '\0', '1\0', '%', '1e400', '1.5', '-1', '0x10', ' ', '99999999999999999999999'];

/** Parameters documented as accepted with no effect, or (unknown tags to exclude) as ignored. */
const NO_EFFECT = new Set(['exclude_tag_id', 'excludeTagId', 'partner_slug', 'tag_match', 'locale', 'sort']);
/** Parameters whose value must be well formed (a key, a number, a date, a cursor, an enum): anything else is 400. */
const WELL_FORMED = /^(order|status|events_status|eventsStatus|cursor|after_cursor|event_date|(liquidity|volume)(_num)?_?(min|max|Min|Max)|(liquidity|volume)(Num)?(Min|Max)|(start|end)_date_(min|max)|(start|end)Date(Min|Max)|start_time_(min|max))$/;

/** The required query of each operation, and where its rows are. */
const BASE: Record<string, string> = { searchCatalogue: 'q=small', searchPublic: 'q=small' };
function rowsOf(handler: string, body: any): unknown[] {
  switch (handler) {
    case 'listEvents':
    case 'listCompatEventsKeyset':
      return body.events;
    case 'listSeries':
      return body.series;
    case 'listMarkets':
      return body.markets;
    case 'searchCatalogue':
      return body.results;
    case 'listCompatEventsPaginated':
      return body.data;
    case 'searchPublic':
      return body.events;
    default:
      return body;
  }
}

const url = (operation: CatalogueOperation, extra: string) => {
  const query = [BASE[operation.handler], extra].filter(Boolean).join('&');
  return `${operation.path}${query ? `?${query}` : ''}`;
};

/** Runs requests a few at a time (the server and database share two cores). */
async function all<T>(items: T[], run: (item: T) => Promise<void>, width = 6): Promise<void> {
  const queue = [...items];
  await Promise.all(Array.from({ length: width }, async () => {
    for (let item = queue.shift(); item !== undefined; item = queue.shift()) await run(item);
  }));
}

function expectEnvelope(response: ApiResponse, code: string, what: string): void {
  expect(response.body.error?.code, what).toBe(code);
}

const listOperations = catalogueOperations.filter((o) => !o.path.includes('{'));
const readOperations = catalogueOperations.filter((o) => o.path.includes('{'));
/** One path per implementation gets every value; aliases get a sample (they share parameters and code). */
const canonical = new Set(catalogueOperations.filter((o) => o.handler === o.operationId).map((o) => o.operationId));

describe('every text parameter of every list', () => {
  it.each(listOperations.map((o) => [o.path, o] as const))('%s', async (_, operation) => {
    const baseline = await api.get(url(operation, ''));
    expect(baseline.status).toBe(200);
    expect(rowsOf(operation.handler, baseline.body).length, 'the fixture gives every list rows').toBeGreaterThan(0);
    // Every value on one path per implementation and on the parameters that name things; a sample elsewhere
    // (aliases share code; keys, numbers, dates and cursors are refused by one check, whatever the value).
    const sample = ["'; DROP TABLE events; --", '\0', '%', 'x'.repeat(10_000)].map(encodeURIComponent).concat('%FF');
    const values = (p: DocumentedParameter) =>
      canonical.has(operation.operationId) && !WELL_FORMED.test(p.name) && p.enum === undefined ? [...HOSTILE_TEXT.map(encodeURIComponent), ...BAD_ESCAPES] : sample;
    const cases = operation.parameters
      .filter((p) => p.in === 'query' && (p.type === 'string' || p.type === 'array'))
      .flatMap((p) => values(p).map((value) => [p, value] as const));
    expect(cases.length).toBeGreaterThan(0);
    await all(cases, async ([parameter, sent]) => {
      const what = `${operation.path} ${parameter.name}=${sent.slice(0, 40)}`;
      // q replaces the base query's text
      const path = parameter.name === 'q' ? `${operation.path}?q=${sent}` : url(operation, `${parameter.name}=${sent}`);
      const response = await api.get(path);
      // NUL cannot be stored or compared as text: refused first, naming the parameter
      if (sent.includes('%00')) {
        expect(response.status, what).toBe(400);
        expect(response.body.error.message, what).toBe(`query parameter '${parameter.name}' contains a NUL character`);
        return expectEnvelope(response, 'invalid_request', what);
      }
      if (sent.length > 1000 && Array.from(decodeURIComponent(sent)).length > (parameter.maxLength ?? parameter.itemMaxLength ?? Infinity)) {
        expect(response.status, `${what}: longer than documented`).toBe(400);
        return expectEnvelope(response, 'invalid_request', what);
      }
      if (operation.handler === 'listCompatEventsKeyset' && parameter.name === 'offset') {
        expect(response.status, what).toBe(422);
        return expectEnvelope(response, 'unprocessable', what);
      }
      if (WELL_FORMED.test(parameter.name) || parameter.enum !== undefined) {
        expect(response.status, what).toBe(400);
        return expectEnvelope(response, 'invalid_request', what);
      }
      expect([200, 400], what).toContain(response.status);
      if (response.status === 400) return expectEnvelope(response, 'invalid_request', what);
      if (NO_EFFECT.has(parameter.name)) {
        expect(response.body, what).toEqual(baseline.body);
        return;
      }
      expect(rowsOf(operation.handler, response.body), what).toEqual([]);
      if (operation.handler === 'listCompatEventsKeyset') expect(response.body.next_cursor, what).toBeNull();
      if (operation.handler === 'listCompatEventsPaginated') expect(response.body.pagination, what).toEqual({ hasMore: false, totalResults: 0 });
      if (operation.handler === 'listMarkets' && 'total' in response.body) expect(response.body.total, what).toBe(0);
      if (operation.handler === 'searchPublic' && parameter.name === 'q') {
        expect(response.body, what).toEqual({ events: [], tags: [], profiles: [], pagination: { hasMore: false, totalResults: 0 } });
      }
    });
  });
});

describe('every number and flag of every list', () => {
  it.each(listOperations.filter((o) => canonical.has(o.operationId)).map((o) => [o.path, o] as const))('%s', async (_, operation) => {
    const parameters = operation.parameters.filter((p) => p.in === 'query' && ['integer', 'boolean', 'number'].includes(p.type));
    const cases = parameters.flatMap((p) => HOSTILE_NUMBER.map((value) => [p, value] as const));
    await all(cases, async ([parameter, value]) => {
      const what = `${operation.path} ${parameter.name}=${JSON.stringify(value)}`;
      const response = await api.get(url(operation, `${parameter.name}=${encodeURIComponent(value)}`));
      if (operation.handler === 'listCompatEventsKeyset' && parameter.name === 'offset' && !value.includes('\0')) {
        expect(response.status, what).toBe(422);
        return;
      }
      expect([200, 400], what).toContain(response.status);
      if (response.status === 400) return expectEnvelope(response, 'invalid_request', what);
      // What gets through is a numeral in decimal digits ('0x10', '1e400' and ' ' are refused): never a flag.
      const n = Number(value);
      expect(parameter.type, what).not.toBe('boolean');
      expect(value, what).toMatch(/^-?\d+(\.\d+)?$/);
      const rows = rowsOf(operation.handler, response.body);
      if (parameter.name === 'limit' || parameter.clampMaximum !== undefined) expect(rows.length, what).toBeLessThanOrEqual(Math.min(n, parameter.clampMaximum ?? Infinity));
      // offsets past the scan window and pages past the end are empty
      if (['offset', 'page'].includes(parameter.name) && n > 10_000) expect(rows, what).toEqual([]);
      // event_week and parent_event_id: any value, an empty page
      if (['event_week', 'parent_event_id'].includes(parameter.name)) expect(response.body, what).toEqual({ events: [], next_cursor: null });
    });
  });

  it('answers a non-numeric, zero, negative or fractional limit with 400 on every list, and clamps a huge one', async () => {
    const limited = listOperations.filter((o) => o.parameters.some((p) => p.name === 'limit'));
    expect(limited.length).toBeGreaterThanOrEqual(14);
    await all(limited, async (operation) => {
      for (const value of ['abc', '0', '-5', '2.5', '%00', '', '1,2', '0x10', '1e400', '%20', '1e2']) {
        const response = await api.get(url(operation, `limit=${value}`));
        expect(response.status, `${operation.path} limit=${value}`).toBe(400);
        expect(response.body.error.message, `${operation.path} limit=${value}`).toMatch(/limit/);
      }
      for (const value of ['99999999999999999999', '100000']) {
        const huge = await api.get(url(operation, `limit=${value}`));
        expect(huge.status, `${operation.path} limit=${value}`).toBe(200);
      }
    });
  });
});

describe('every path parameter of every single read', () => {
  it.each(readOperations.map((o) => [o.path, o] as const))('%s', async (_, operation) => {
    const parameter = operation.parameters.find((p) => p.in === 'path')!;
    await all([...HOSTILE_TEXT.map(encodeURIComponent), ...BAD_ESCAPES], async (sent) => {
      const path = operation.path.replace(`{${parameter.name}}`, sent);
      const response = await api.get(path);
      const what = `${operation.path} ${sent.slice(0, 40)}`;
      expect([400, 404], what).toContain(response.status);
      expectEnvelope(response, response.status === 404 ? 'not_found' : 'invalid_request', what);
    });
  });
});

describe('after hostile input', () => {
  it('still holds every fixture row and answers normally', async () => {
    for (const table of ['events', 'series', 'markets', 'tags']) {
      expect(Number((await api.db(table).count<Array<{ n: string }>>('* as n'))[0]!.n), table).toBeGreaterThan(0);
    }
    expect((await api.get('/events?slug=sca-1')).body).toHaveLength(1);
  });
});

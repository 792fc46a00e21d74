import type { ErrorObject } from 'ajv';
import type { Operation } from 'openapi-backend';
import type { OpenAPIV3 } from 'openapi-types';

/** What URLSearchParams would change in a query string: escapes, '+' and lone surrogates (to U+FFFD). */
const ENCODED = /[%+\uD800-\uDFFF]/;

/**
 * Koa's `ctx.query`, without its per-request cache and a defineProperty per key: URLSearchParams's
 * (WHATWG) parsing, a repeated name giving the array of its values, keys in first-seen order, `__proto__`
 * an own property. A query string with nothing to decode is split directly, as URLSearchParams splits it
 * (one leading '?' dropped, empty pairs skipped, the value after the first '=').
 */
export function parseQuery(querystring: string): Record<string, string | string[]> {
  const query: Record<string, string | string[]> = {};
  if (querystring === '') return query;
  if (ENCODED.test(querystring)) {
    for (const [name, value] of new URLSearchParams(querystring)) addQueryValue(query, name, value);
    return query;
  }
  // pair by pair: split's array of pairs (and its cache of results) cost more
  for (let start = querystring.startsWith('?') ? 1 : 0; start <= querystring.length; ) {
    const ampersand = querystring.indexOf('&', start);
    const end = ampersand === -1 ? querystring.length : ampersand;
    const pair = querystring.slice(start, end);
    start = end + 1;
    if (pair === '') continue;
    const equals = pair.indexOf('=');
    if (equals === -1) addQueryValue(query, pair, '');
    else addQueryValue(query, pair.slice(0, equals), pair.slice(equals + 1));
  }
  return query;
}

function addQueryValue(query: Record<string, string | string[]>, name: string, value: string): void {
  if (!Object.hasOwn(query, name)) {
    if (name === '__proto__') Object.defineProperty(query, name, { value, writable: true, enumerable: true, configurable: true });
    else query[name] = value;
    return;
  }
  const previous = query[name]!;
  if (Array.isArray(previous)) previous.push(value);
  else query[name] = [previous, value];
}

/** The numeric types a query parameter can have. */
export type NumericType = 'integer' | 'number';

/**
 * Numerals as people write them. Ajv's type coercion takes whatever `+value` turns into a number, so
 * "0x10" would be 16, "1e400" Infinity (an integer to its check) and " " zero: refused here, before it.
 */
const NUMERALS: Record<NumericType, RegExp> = { integer: /^[+-]?\d{1,300}$/, number: /^[+-]?(\d{1,300}(\.\d{0,300})?|\.\d{1,300})$/ };

/** The operation's integer and number query parameters (or arrays of them): name and type, the first of each name. */
export function numericQueryParametersOf(operation: Operation): Array<[string, NumericType]> {
  const byName = new Map<string, NumericType>();
  for (const parameter of (operation.parameters ?? []) as OpenAPIV3.ParameterObject[]) {
    const schema = parameter.schema as OpenAPIV3.SchemaObject | undefined;
    if (parameter.in !== 'query' || !schema || byName.has(parameter.name)) continue;
    const type = schema.type === 'array' ? (schema.items as OpenAPIV3.SchemaObject | undefined)?.type : schema.type;
    if (type === 'integer' || type === 'number') byName.set(parameter.name, type);
  }
  return [...byName];
}

function isNumeral(type: NumericType, value: unknown): boolean {
  return typeof value !== 'string' || NUMERALS[type].test(value);
}

export function malformedNumerals(numeric: ReadonlyArray<readonly [string, NumericType]>, query: Record<string, unknown>): ErrorObject[] | undefined {
  let errors: ErrorObject[] | undefined;
  for (const [name, type] of numeric) {
    const value = query[name];
    if (value === undefined) continue;
    let wellFormed = true;
    if (Array.isArray(value)) {
      for (const item of value) wellFormed &&= isNumeral(type, item);
    } else {
      wellFormed = isNumeral(type, value);
    }
    if (wellFormed) continue;
    (errors ??= []).push({ keyword: 'type', instancePath: `/query/${name}`, schemaPath: `#/query/${name}`, params: { type }, message: `must be ${type}` });
  }
  return errors;
}

/** Page sizes and the like above their documented maximum are taken at the maximum. */
export function clampQuery(query: Record<string, unknown>, maxima: ReadonlyArray<readonly [string, number]>): Record<string, unknown> {
  for (const [name, maximum] of maxima) {
    const value = query[name];
    if (typeof value === 'number' && value > maximum) query[name] = maximum;
  }
  return query;
}

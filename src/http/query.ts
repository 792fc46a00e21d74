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

/**
 * Text PostgreSQL can store: a `text` value cannot hold NUL, and a lone UTF-16 surrogate has no UTF-8 form
 * (it would be stored altered, or refused). Input carrying either is refused before it reaches a query.
 */
// eslint-disable-next-line no-control-regex -- NUL is the one control character PostgreSQL text cannot hold
const SUSPECT = /[\u0000\uD800-\uDFFF]/;
const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;

/** Why a string cannot be stored, or undefined if it can. */
export function unstorable(text: string): string | undefined {
  if (!SUSPECT.test(text)) return undefined;
  if (text.includes('\u0000')) return 'contains a NUL character';
  return LONE_SURROGATE.test(text) ? 'contains a lone surrogate (not valid Unicode text)' : undefined;
}

export interface UnstorableField {
  /** JSON-pointer-like path of the field (`/name`, `/order_ids/3`). */
  path: string;
  problem: string;
}

/** The first string (value or object key) in a JSON value that cannot be stored; depth-bounded. */
export function findUnstorable(value: unknown, path = '', depth = 0): UnstorableField | undefined {
  if (typeof value === 'string') {
    const problem = unstorable(value);
    return problem ? { path: path || '/', problem } : undefined;
  }
  if (typeof value !== 'object' || value === null || depth > 64) return undefined;
  if (Array.isArray(value)) {
    for (let i = 0; i < value.length; i++) {
      const found = findUnstorable(value[i], `${path}/${i}`, depth + 1);
      if (found) return found;
    }
    return undefined;
  }
  for (const key of Object.keys(value)) {
    const keyProblem = unstorable(key);
    if (keyProblem) return { path: path || '/', problem: `has a property name that ${keyProblem}` };
    const found = findUnstorable((value as Record<string, unknown>)[key], `${path}/${key}`, depth + 1);
    if (found) return found;
  }
  return undefined;
}

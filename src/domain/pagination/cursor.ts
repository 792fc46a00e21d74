import { invalid } from '../errors.js';

/**
 * Opaque page cursors. A cursor names the collection it belongs to and the sort key of the last row
 * it returned; anything else (tampered, truncated, or from another collection) is refused as invalid.
 * Clients must round-trip them verbatim; their content may change between versions.
 */
const VERSION = 1;

type Key = ReadonlyArray<string | number>;

export function encodeCursor(collection: string, key: Key): string {
  return Buffer.from(JSON.stringify({ v: VERSION, c: collection, k: key }), 'utf8').toString('base64url');
}

export function decodeCursor(collection: string, cursor: string, arity: number): Array<string | number> {
  const malformed = invalid(`cursor is not a cursor of this collection; pass back the cursor of the previous page verbatim`, [
    { location: 'query', path: 'cursor', message: 'malformed cursor' },
  ]);
  if (!/^[A-Za-z0-9_-]{1,1024}$/.test(cursor)) throw malformed;
  let parsed: unknown;
  try {
    parsed = JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8'));
  } catch {
    throw malformed;
  }
  const { v, c, k } = (parsed ?? {}) as { v?: unknown; c?: unknown; k?: unknown };
  if (
    v !== VERSION ||
    c !== collection ||
    !Array.isArray(k) ||
    k.length !== arity ||
    !k.every((part) => typeof part === 'string' || (typeof part === 'number' && Number.isFinite(part)))
  ) {
    throw malformed;
  }
  return k as Array<string | number>;
}

/** A page of `limit` rows fetched as `limit + 1`: the extra row only says whether another page exists. */
export function splitPage<T>(rows: T[], limit: number): { items: T[]; hasMore: boolean } {
  return rows.length > limit ? { items: rows.slice(0, limit), hasMore: true } : { items: rows, hasMore: false };
}

import { invalid } from '../errors.js';

/**
 * Opaque page cursors. A cursor names the collection it belongs to and the sort key of the last row
 * it returned; anything else (tampered, truncated, or from another collection) is refused as invalid.
 * Clients must round-trip them verbatim; their content may change between versions.
 */
const VERSION = 1;

type Key = ReadonlyArray<string | number>;

/** What each part of a cursor's key must look like: checked before the key reaches a query. */
export type KeyPart = 'text' | 'integer' | 'timestamp' | 'uuid';

const PART_CHECKS: Record<KeyPart, (value: unknown) => boolean> = {
  text: (value) => typeof value === 'string' && value.length <= 512,
  integer: (value) => Number.isSafeInteger(value),
  timestamp: (value) => typeof value === 'string' && /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d{1,6})?Z$/.test(value) && !Number.isNaN(Date.parse(value)),
  uuid: (value) => typeof value === 'string' && /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/.test(value),
};

export function encodeCursor(collection: string, key: Key): string {
  return Buffer.from(JSON.stringify({ v: VERSION, c: collection, k: key }), 'utf8').toString('base64url');
}

export function decodeCursor(collection: string, cursor: string, shape: readonly KeyPart[]): Array<string | number> {
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
    k.length !== shape.length ||
    !shape.every((part, i) => PART_CHECKS[part](k[i]))
  ) {
    throw malformed;
  }
  return k as Array<string | number>;
}

/** A page of `limit` rows fetched as `limit + 1`: the extra row only says whether another page exists. */
export function splitPage<T>(rows: T[], limit: number): { items: T[]; hasMore: boolean } {
  return rows.length > limit ? { items: rows.slice(0, limit), hasMore: true } : { items: rows, hasMore: false };
}

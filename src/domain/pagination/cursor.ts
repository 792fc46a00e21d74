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

/** Cursors are at most this long unless a collection allows more (its keys carry long text). */
export const CURSOR_MAX_LENGTH = 1024;

const TIMESTAMP = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d{1,6})?Z$/;

/**
 * A real instant in years 1 to 9999: JavaScript's parser rolls impossible dates over (February 30th is
 * March 2nd, 24:00 the next day) and takes year 0, all of which PostgreSQL refuses, so the date and time
 * must come back unchanged.
 */
function isRealInstant(value: string): boolean {
  const time = Date.parse(value);
  return !Number.isNaN(time) && !value.startsWith('0000') && new Date(time).toISOString().slice(0, 19) === value.slice(0, 19);
}

const PART_CHECKS: Record<KeyPart, (value: unknown) => boolean> = {
  // bounded by the cursor's length; PostgreSQL refuses NUL in text, and no stored text holds one
  text: (value) => typeof value === 'string' && !value.includes('\0'),
  integer: (value) => Number.isSafeInteger(value),
  timestamp: (value) => typeof value === 'string' && TIMESTAMP.test(value) && isRealInstant(value),
  uuid: (value) => typeof value === 'string' && /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/.test(value),
};

export function encodeCursor(collection: string, key: Key): string {
  return Buffer.from(JSON.stringify({ v: VERSION, c: collection, k: key }), 'utf8').toString('base64url');
}

/** The error of a cursor that does not decode: built only when one is refused. */
const malformed = () =>
  invalid(`cursor is not a cursor of this collection; pass back the cursor of the previous page verbatim`, [
    { location: 'query', path: 'cursor', message: 'malformed cursor' },
  ]);

export function decodeCursor(
  collection: string,
  cursor: string,
  shape: readonly KeyPart[],
  options: { maxLength?: number } = {},
): Array<string | number> {
  if (cursor.length > (options.maxLength ?? CURSOR_MAX_LENGTH) || !/^[A-Za-z0-9_-]+$/.test(cursor)) throw malformed();
  let parsed: unknown;
  try {
    parsed = JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8'));
  } catch {
    throw malformed();
  }
  const { v, c, k } = (parsed ?? {}) as { v?: unknown; c?: unknown; k?: unknown };
  if (
    v !== VERSION ||
    c !== collection ||
    !Array.isArray(k) ||
    k.length !== shape.length ||
    !shape.every((part, i) => PART_CHECKS[part](k[i]))
  ) {
    throw malformed();
  }
  return k as Array<string | number>;
}

/** A page of `limit` rows fetched as `limit + 1`: the extra row only says whether another page exists. */
export function splitPage<T>(rows: T[], limit: number): { items: T[]; hasMore: boolean } {
  return rows.length > limit ? { items: rows.slice(0, limit), hasMore: true } : { items: rows, hasMore: false };
}

/** Offset lists scan at most this many rows. */
export const OFFSET_SCAN_WINDOW = 10_000;

/**
 * The rows an offset page may read: `limit` rows from `offset`, cut at the scan window.
 * A window of zero rows means an empty page without a query.
 */
export function offsetWindow(offset: number, limit: number): { offset: number; limit: number } {
  const start = Math.min(Math.max(offset, 0), OFFSET_SCAN_WINDOW);
  return { offset: start, limit: Math.max(0, Math.min(limit, OFFSET_SCAN_WINDOW - start)) };
}

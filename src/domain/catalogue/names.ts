/**
 * How the native catalogue reads the names clients send (tickers, slugs), before they reach a query:
 * pure functions, no SQL.
 */

/** Stored text never holds NUL (PostgreSQL refuses it in text), so a value holding one names nothing. */
export const canName = (value: string): boolean => !value.includes('\0');

/** Tickers are stored upper-case: a ticker is matched case-insensitively by upper-casing it. */
export const tickerKey = (value: string): string | undefined => (canName(value) ? value.toUpperCase() : undefined);

/** Slugs are stored lower-case. */
export const slugKey = (value: string): string | undefined => (canName(value) ? value.toLowerCase() : undefined);

/**
 * A market reference as markets are found by it: tickers are stored upper-case (and ids are digits), so
 * upper-casing matches every ticker case-insensitively, as the catalogue does.
 */
export const marketRefOf = (ref: string): string => ref.toUpperCase();

import { Decimal } from 'decimal.js';

/** `2026-11-22T10:00:00.000Z`: the native shapes' timestamps. */
export const isoZ = (date: Date): string => date.toISOString();

/** `2026-11-22T10:00:00.000+00:00`: the compatibility shapes' timestamps. */
export const isoOffset = (date: Date): string => date.toISOString().replace('Z', '+00:00');

/** `2026-11-22`: the UTC day. */
export const utcDay = (date: Date): string => date.toISOString().slice(0, 10);

/** A PostgreSQL numeric as an exact decimal string without trailing zeros: '1520.50000000' -> '1520.5'. */
export const decimal = (value: string): string => new Decimal(value).toFixed();

/** A price on the 0.01 tick: '0.6200' -> '0.62'. */
export const price = (value: string): string => new Decimal(value).toFixed(2);

export const nullablePrice = (value: string | null): string | null => (value === null ? null : price(value));

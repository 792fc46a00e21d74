import { Decimal } from 'decimal.js';

/** `2026-11-22T10:00:00.000Z`: the native shapes' timestamps. */
export const isoZ = (date: Date): string => date.toISOString();

/** `2026-11-22T10:00:00.000+00:00`: the compatibility shapes' timestamps. */
export const isoOffset = (date: Date): string => date.toISOString().replace('Z', '+00:00');

/** `2026-11-22`: the UTC day. */
export const utcDay = (date: Date): string => date.toISOString().slice(0, 10);

/**
 * PostgreSQL's text of a numeric: digits with an optional fraction, no exponent, no leading zeros. Lists
 * present several per item, so the presenters cut such text as text and leave anything else to decimal.js.
 */
const NUMERIC_TEXT = /^-?(?:0|[1-9]\d*)(?:\.(\d+))?$/;

/** A PostgreSQL numeric as an exact decimal string without trailing zeros: '1520.50000000' -> '1520.5'. */
export const decimal = (value: string): string => {
  const match = NUMERIC_TEXT.exec(value);
  if (!match || value === '-0' || value.startsWith('-0.')) return new Decimal(value).toFixed();
  if (match[1] === undefined) return value;
  const fraction = match[1].replace(/0+$/, '');
  const whole = value.slice(0, value.length - match[1].length - 1);
  return fraction === '' ? whole : `${whole}.${fraction}`;
};

/** A price on the 0.01 tick: '0.6200' -> '0.62'. */
export const price = (value: string): string => {
  const match = NUMERIC_TEXT.exec(value);
  // Exactly two places, or more that are all zeros: the text is the price; else round (decimal.js).
  if (!match || match[1] === undefined || !/^\d\d0*$/.test(match[1]) || value.startsWith('-')) return new Decimal(value).toFixed(2);
  return value.slice(0, value.length - match[1].length + 2);
};

/** What a market that has never traded shows as its last price in either frame (the catalogues this one follows show 0). */
export const NEVER_TRADED_PRICE = '0';

/** A last price on the 0.01 tick, or NEVER_TRADED_PRICE before the first trade. */
export const lastPrice = (value: string | null): string => (value === null ? NEVER_TRADED_PRICE : price(value));

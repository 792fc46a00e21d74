import { clip, invalid } from '../errors.js';

/**
 * Exact units of the exchange, as scaled integers (never binary floats):
 * - price: integer ticks of 0.01 Dot, 1..99 (`number`; small enough to be exact);
 * - count: `bigint` lots of 0.0001 contract;
 * - money: `bigint` micro-Dots, so that 1 tick x 1 lot = 0.01 x 0.0001 = 1 micro-Dot exactly.
 * Decimal strings (the wire format) are converted here and nowhere else.
 */
export const TICKS_PER_DOT = 100;
export const MIN_PRICE_TICKS = 1;
export const MAX_PRICE_TICKS = 99;
export const LOTS_PER_CONTRACT = 10_000n;
export const MICRO_DOTS_PER_DOT = 1_000_000n;
/** Largest accepted count: 1e9 contracts. Anything above is a typo or an attack, not an order. */
export const MAX_COUNT_LOTS = 1_000_000_000n * LOTS_PER_CONTRACT;
/** Largest accepted money amount: 1e15 Dots (keeps values well inside PostgreSQL numeric columns). */
export const MAX_MICRO_DOTS = 1_000_000_000_000_000n * MICRO_DOTS_PER_DOT;

const PRICE_PLACES = 2;
const LOT_PLACES = 4;
const MICRO_PLACES = 6;
// Bounds the work done on hostile input before any BigInt is built.
const MAX_TEXT_LENGTH = 40;
// Plain decimal only: no sign, exponent, whitespace, or bare leading/trailing point.
const DECIMAL = /^(\d+)(?:\.(\d+))?$/;

/**
 * `text` as an integer count of 10^-places units, or undefined when it is not a plain non-negative
 * decimal or has non-zero digits beyond `places` (trailing zeros are exact, so '0.450' is fine).
 */
export function parseScaled(text: string, places: number): bigint | undefined {
  if (typeof text !== 'string' || text.length === 0 || text.length > MAX_TEXT_LENGTH) return undefined;
  const m = DECIMAL.exec(text);
  if (!m) return undefined;
  const whole = m[1]!;
  const frac = m[2] ?? '';
  const kept = frac.slice(0, places);
  if (/[^0]/.test(frac.slice(places))) return undefined;
  return BigInt(whole + kept.padEnd(places, '0'));
}

/** Outcome-frame price '0.45' -> 45 ticks. Throws invalid_request off the tick or outside 0.01..0.99. */
export function parsePriceTicks(text: string): number {
  const ticks = parseScaled(text, PRICE_PLACES);
  if (ticks === undefined || ticks < BigInt(MIN_PRICE_TICKS) || ticks > BigInt(MAX_PRICE_TICKS)) {
    throw invalid(`price must be a decimal from 0.01 to 0.99 on a 0.01 tick, got ${JSON.stringify(clip(text))}`);
  }
  return Number(ticks);
}

/** Contract count '12.5' -> 125000n lots. Throws invalid_request unless positive, on 0.0001, and sane. */
export function parseCountLots(text: string): bigint {
  const lots = parseScaled(text, LOT_PLACES);
  if (lots === undefined || lots <= 0n || lots > MAX_COUNT_LOTS) {
    throw invalid(`count must be a positive decimal on a 0.0001 quantum, at most 1000000000, got ${JSON.stringify(clip(text))}`);
  }
  return lots;
}

/** Money '12.5' -> 12500000n micro-Dots; zero allowed (balances, grants). Throws invalid_request otherwise. */
export function parseMicroDots(text: string): bigint {
  const micro = parseScaled(text, MICRO_PLACES);
  if (micro === undefined || micro > MAX_MICRO_DOTS) {
    throw invalid(`amount must be a non-negative decimal with at most 6 places, got ${JSON.stringify(clip(text))}`);
  }
  return micro;
}

/** Cost of `lots` at `ticks`: exact, since 1 tick x 1 lot is 1 micro-Dot. */
export function notionalMicroDots(ticks: number, lots: bigint): bigint {
  return BigInt(ticks) * lots;
}

/** 45 -> '0.45' (any integer tick count, e.g. 100 -> '1.00'). */
export function formatTicks(ticks: number): string {
  if (!Number.isSafeInteger(ticks)) throw new RangeError(`ticks must be an integer, got ${ticks}`);
  return formatFixed(BigInt(ticks), PRICE_PLACES, PRICE_PLACES);
}

/**
 * 125000n -> '12.5'. Exact: trailing zeros are dropped down to `minPlaces` decimals (0..4), never
 * a non-zero digit; formatLots(100000n, 2) -> '10.00'.
 */
export function formatLots(lots: bigint, minPlaces = 0): string {
  checkPlaces(minPlaces, LOT_PLACES);
  const full = formatFixed(lots, LOT_PLACES, LOT_PLACES);
  const [whole, frac = ''] = full.split('.');
  const trimmed = frac.replace(/0+$/, '').padEnd(minPlaces, '0');
  return trimmed.length > 0 ? `${whole}.${trimmed}` : whole!;
}

/**
 * Micro-Dots as a decimal with exactly `places` decimals (0..6). Below 6 places the value is
 * rounded half away from zero, so only use fewer places for display, never for bookkeeping.
 */
export function formatMicroDots(micro: bigint, places = MICRO_PLACES): string {
  checkPlaces(places, MICRO_PLACES);
  const drop = 10n ** BigInt(MICRO_PLACES - places);
  const negative = micro < 0n;
  const abs = negative ? -micro : micro;
  const rounded = (abs + drop / 2n) / drop; // drop is 1 at 6 places: no rounding
  return (negative && rounded !== 0n ? '-' : '') + formatFixed(rounded, places, places);
}

// Non-negative-or-signed scaled integer -> decimal with exactly `shown` places (shown <= places).
function formatFixed(value: bigint, places: number, shown: number): string {
  const negative = value < 0n;
  const digits = (negative ? -value : value).toString().padStart(places + 1, '0');
  const whole = digits.slice(0, digits.length - places);
  const frac = digits.slice(digits.length - places, digits.length - places + shown);
  return (negative ? '-' : '') + (shown > 0 ? `${whole}.${frac}` : whole);
}

function checkPlaces(places: number, max: number): void {
  if (!Number.isInteger(places) || places < 0 || places > max) throw new RangeError(`places must be 0..${max}, got ${places}`);
}

// --- stored decimals (always well-formed: the schema's types and checks guarantee it)

function stored(textValue: string, places: number): bigint {
  const value = parseScaled(String(textValue), places);
  if (value === undefined) throw new Error(`unexpected stored decimal ${String(textValue)} for ${places} places`);
  return value;
}

export const lotsOf = (value: string): bigint => stored(value, 4);
export const ticksOf = (value: string): number => Number(stored(value, 2));
export const microOf = (value: string): bigint => stored(value, 6);

/** A stored count: a whole number without leading zeros, up to 4 decimals, then only zeros. */
const STORED_LOTS = /^(0|[1-9]\d*)(?:\.(\d{1,4})0*)?$/;

/**
 * A stored count as formatLots(lotsOf(text), minPlaces) writes it, from its text alone (no bigint): price
 * history formats two a candle, 2,880 for a day of minutes.
 */
export function formatStoredLots(text: string, minPlaces = 0): string {
  checkPlaces(minPlaces, LOT_PLACES);
  const match = STORED_LOTS.exec(text);
  if (!match) return formatLots(lotsOf(text), minPlaces);
  const frac = (match[2] ?? '').replace(/0+$/, '').padEnd(minPlaces, '0');
  return frac.length > 0 ? `${match[1]}.${frac}` : match[1]!;
}

/** Micro-Dots as Dots, exact, with at least two and at most six places. */
export function formatMoney(micro: bigint): string {
  const full = formatMicroDots(micro, 6);
  return full.replace(/(\.\d\d\d*?)0+$/, '$1');
}

export function iso(date: Date): string {
  return date.toISOString();
}

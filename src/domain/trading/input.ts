import type { Action, OrderStatus, Outcome, TimeInForce } from '../../db/tables.js';
import type { SignedRecord } from '../clob/signed-order.js';
import { marketRefOf } from '../catalogue/names.js';
import { clip, DomainError, invalid } from '../errors.js';
import { parseCountLots, parsePriceTicks } from './money.js';
import type { PlaceOrderInput, PreviewInput } from './types.js';

/**
 * Checking what clients send (pure), and the wire formats of what goes back:
 * - prices: two places ("0.45");
 * - counts: contracts with up to 4 places, no trailing zeros ("10", "12.5");
 * - balances: Dots with at least 2 and up to 6 places, exact ("1000.00", "999.955");
 * - preview money fields: exactly two places.
 */

export const ZERO_BUILDER_CODE = `0x${'0'.repeat(64)}`;
const BUILDER_CODE = /^0x[0-9a-fA-F]{64}$/;
const UUID = /^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$/;
const MAX_CLIENT_ORDER_ID = 255;
const ORDER_STATUSES: readonly OrderStatus[] = ['OPEN', 'PARTIAL', 'FILLED', 'CANCELLED'];

/** A lower-cased UUID, or undefined when `id` is not one (such an id names no order: 404, never 500). */
export function orderIdOf(id: unknown): string | undefined {
  return typeof id === 'string' && UUID.test(id) ? id.toLowerCase() : undefined;
}

export interface OrderTerms {
  ticker: string;
  side: Outcome;
  action: Action;
  /** Outcome-frame limit, ticks. */
  price: number;
  lots: bigint;
  builderCode: string;
}

export interface Placement extends OrderTerms {
  timeInForce: TimeInForce;
  clientOrderId: string | undefined;
  postOnly: boolean;
  reduceOnly: boolean;
  expiration: Date | null;
  /** What an order-book client's signed order was signed with, when it is one. */
  signed?: SignedRecord;
}

const field = (path: string, message: string) => invalid(message, [{ location: 'body', path, message }]);

/** `bid` aliases YES, `ask` aliases NO. */
export function sideOf(side: unknown): Outcome {
  const s = typeof side === 'string' ? side.toLowerCase() : side;
  if (s === 'yes' || s === 'bid') return 'yes';
  if (s === 'no' || s === 'ask') return 'no';
  throw field('side', `side must be one of yes, no, bid, ask, got ${JSON.stringify(clip(side))}`);
}

function text(value: unknown): string {
  // Decimal fields are strings on the wire; a JSON number is read through its shortest text form.
  return typeof value === 'number' && Number.isFinite(value) ? String(value) : (value as string);
}

/** Fee fields a preview or placement may carry: only as zero (fee-free profile, fail-closed). */
export const FEE_FIELDS = [
  'builder_maker_fee_bps',
  'builder_taker_fee_bps',
  'fee_rate_bps',
  'platform_maker_fee_bps',
  'platform_taker_fee_bps',
  'feeRateBps',
] as const;

/** Zero as a number, or a plain decimal string of value zero ('0', '0.00'); null counts as absent. */
function isZeroFee(value: unknown): boolean {
  if (value === undefined || value === null) return true;
  if (typeof value === 'number') return value === 0;
  return typeof value === 'string' && /^0+(\.0+)?$/.test(value.trim());
}

/** Refuses any non-zero fee field, naming it (400). */
export function checkFeesAreZero(input: Partial<Record<(typeof FEE_FIELDS)[number], unknown>>): void {
  for (const name of FEE_FIELDS) {
    if (!isZeroFee(input[name])) throw field(name, `${name} must be 0: the exchange is fee-free, got ${JSON.stringify(clip(input[name]))}`);
  }
}

export function parseTerms(input: PreviewInput): OrderTerms {
  checkFeesAreZero(input);
  if (typeof input.ticker !== 'string' || input.ticker.trim() === '') throw field('ticker', 'ticker is required');
  const action = input.action ?? 'buy';
  if (action !== 'buy' && action !== 'sell') throw field('action', `action must be buy or sell, got ${JSON.stringify(clip(action))}`);
  const builderCode = input.builder_code ?? ZERO_BUILDER_CODE;
  if (typeof builderCode !== 'string' || !BUILDER_CODE.test(builderCode)) {
    throw field('builder_code', 'builder_code must be a 0x-prefixed 32-byte hex string (0x followed by 64 hex digits)');
  }
  return {
    ticker: marketRefOf(input.ticker.trim()),
    side: sideOf(input.side),
    action,
    price: parsePriceTicks(text(input.price)),
    lots: parseCountLots(text(input.count)),
    builderCode,
  };
}

/** Checks an order to place; `now` is the service's clock (expiry must be after it). */
export function parsePlacement(input: PlaceOrderInput, now: Date): Placement {
  const terms = parseTerms(input);
  const type = input.type ?? 'LIMIT';
  if (type !== 'LIMIT') throw field('type', `type must be LIMIT, got ${JSON.stringify(clip(type))}`);
  const timeInForce = input.time_in_force ?? 'GTC';
  if (timeInForce !== 'GTC' && timeInForce !== 'IOC' && timeInForce !== 'FOK') {
    throw field('time_in_force', `time_in_force must be GTC, IOC or FOK, got ${JSON.stringify(clip(timeInForce))}`);
  }
  const clientOrderId = input.client_order_id;
  if (clientOrderId !== undefined && (typeof clientOrderId !== 'string' || clientOrderId.length === 0 || clientOrderId.length > MAX_CLIENT_ORDER_ID)) {
    throw field('client_order_id', `client_order_id must be a string of 1 to ${MAX_CLIENT_ORDER_ID} characters`);
  }
  const postOnly = input.post_only ?? false;
  const reduceOnly = input.reduce_only ?? false;
  if (typeof postOnly !== 'boolean') throw field('post_only', 'post_only must be a boolean');
  if (typeof reduceOnly !== 'boolean') throw field('reduce_only', 'reduce_only must be a boolean');
  if (reduceOnly && terms.action !== 'sell') throw field('reduce_only', 'reduce_only orders must be sells (they may only reduce a held position)');
  let expiration: Date | null = null;
  if (input.expiration_ts !== undefined && input.expiration_ts !== null) {
    expiration = timestampOf(input.expiration_ts);
    if (expiration.getTime() <= now.getTime()) throw field('expiration_ts', 'expiration_ts must be in the future');
  }
  return { ...terms, timeInForce, clientOrderId, postOnly, reduceOnly, expiration, ...(input.signed ? { signed: input.signed } : {}) };
}

/** RFC 3339 (with an offset or Z), or whole Unix seconds as Kalshi clients send them. */
function timestampOf(value: unknown): Date {
  const bad = () => field('expiration_ts', 'expiration_ts must be an RFC 3339 timestamp with a time zone, or Unix seconds');
  if (typeof value === 'number' || (typeof value === 'string' && /^\d{1,12}$/.test(value))) {
    const seconds = Number(value);
    if (!Number.isSafeInteger(seconds) || seconds < 0) throw bad();
    return new Date(seconds * 1000);
  }
  if (typeof value !== 'string' || !/^\d{4}-\d{2}-\d{2}[Tt ]\d{2}:\d{2}(:\d{2}(\.\d{1,9})?)?([Zz]|[+-]\d{2}:\d{2})$/.test(value)) throw bad();
  const ms = Date.parse(value.replace(' ', 'T'));
  if (Number.isNaN(ms)) throw bad();
  return new Date(ms);
}

/** A decrease's new remainder: positive, on the 0.0001 quantum (400 otherwise; zero is a cancel, not a decrease). */
export function parseDecreaseCount(count: unknown): bigint {
  try {
    return parseCountLots(text(count));
  } catch (error) {
    if (error instanceof DomainError) {
      throw invalid(`count must be the new remaining count: positive, on the 0.0001 quantum, below the current remainder; got ${JSON.stringify(clip(count))}`, [
        { location: 'body', path: 'count', message: error.message },
      ]);
    }
    throw error;
  }
}

export function parseStatuses(statuses: readonly string[] | undefined): OrderStatus[] | undefined {
  if (!statuses || statuses.length === 0) return undefined;
  for (const status of statuses) {
    if (!ORDER_STATUSES.includes(status as OrderStatus)) {
      throw invalid(`status must be among ${ORDER_STATUSES.join(', ')}, got ${JSON.stringify(clip(status))}`, [{ location: 'query', path: 'status', message: 'unknown status' }]);
    }
  }
  return [...statuses] as OrderStatus[];
}

export function pageLimit(limit: number | undefined): number {
  if (typeof limit !== 'number' || !Number.isFinite(limit)) return 20;
  return Math.min(100, Math.max(1, Math.trunc(limit)));
}

import { parseScaled } from '../trading/money.js';
import type { CatalogueStatus, OrderStatus } from '../../db/tables.js';

/**
 * Whether a resting order scores for maker rewards (pure). Every condition must hold:
 * 1. the order is the caller's (the caller passes only its own orders; others are never candidates);
 * 2. it rests on the book: OPEN or PARTIAL, and not past its `expiration_ts`;
 * 3. its market is ACTIVE with rewards enabled (both `rewards_min_size` and `rewards_max_spread` set);
 * 4. its remaining count is at least `rewards_min_size` contracts;
 * 5. the market has a midpoint: a best YES bid and a best YES ask (one side empty: no midpoint, no score);
 *    the midpoint is (best bid + best ask) / 2 in the YES frame;
 * 6. the order's YES-frame price (a NO order at p sits at 1 - p) is within `rewards_max_spread` of the
 *    midpoint, inclusive;
 * 7. the account's heartbeat allows it: an account that has ever started a session scores only while
 *    that session is live.
 * Arithmetic is exact: prices in 0.0001 units, sizes in 0.00000001 units, the midpoint doubled.
 */

export interface ScoringCandidate {
  status: OrderStatus;
  /** Decimal contracts. */
  remaining: string;
  /** YES-frame price, decimal. */
  yesPrice: string;
  expiration: Date | null;
  marketStatus: CatalogueStatus;
  rewardsMinSize: string | null;
  rewardsMaxSpread: string | null;
}

/** Best YES-frame bid and ask of the order's market (decimal strings), null for an empty side. */
export interface BookTop {
  bestBid: string | null;
  bestAsk: string | null;
}

const PRICE_PLACES = 4;
const SIZE_PLACES = 8;

function exact(text: string, places: number): bigint {
  const value = parseScaled(text, places);
  if (value === undefined) throw new Error(`unexpected stored decimal ${text} for ${places} places`);
  return value;
}

/** Distance of the order's price from the midpoint, doubled, in 0.0001 units; undefined without a midpoint. */
export function doubledDistanceFromMidpoint(yesPrice: string, top: BookTop): bigint | undefined {
  if (top.bestBid === null || top.bestAsk === null) return undefined;
  const doubledMid = exact(top.bestBid, PRICE_PLACES) + exact(top.bestAsk, PRICE_PLACES);
  const distance = 2n * exact(yesPrice, PRICE_PLACES) - doubledMid;
  return distance < 0n ? -distance : distance;
}

export function isScoring(order: ScoringCandidate, top: BookTop, heartbeatAllows: boolean, now: Date): boolean {
  if (!heartbeatAllows) return false;
  if (order.status !== 'OPEN' && order.status !== 'PARTIAL') return false;
  if (order.expiration && order.expiration.getTime() <= now.getTime()) return false;
  if (order.marketStatus !== 'ACTIVE' || order.rewardsMinSize === null || order.rewardsMaxSpread === null) return false;
  if (exact(order.remaining, SIZE_PLACES) < exact(order.rewardsMinSize, SIZE_PLACES)) return false;
  const distance = doubledDistanceFromMidpoint(order.yesPrice, top);
  if (distance === undefined) return false;
  return distance <= 2n * exact(order.rewardsMaxSpread, PRICE_PLACES);
}

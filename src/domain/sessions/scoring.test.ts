import { describe, expect, it } from 'vitest';
import { doubledDistanceFromMidpoint, isScoring, type ScoringCandidate } from './scoring.js';

const NOW = new Date('2030-01-01T00:00:00Z');
const order = (change: Partial<ScoringCandidate> = {}): ScoringCandidate => ({
  status: 'OPEN',
  remaining: '10.0000',
  yesPrice: '0.48',
  expiration: null,
  marketStatus: 'ACTIVE',
  rewardsMinSize: '5.00000000',
  rewardsMaxSpread: '0.0300',
  ...change,
});
const book = { bestBid: '0.49', bestAsk: '0.51' };

describe('isScoring', () => {
  it('scores a resting order of a rewarded ACTIVE market, big enough, within the spread, heartbeat allowing', () => {
    expect(isScoring(order(), book, true, NOW)).toBe(true);
    expect(isScoring(order({ status: 'PARTIAL' }), book, true, NOW)).toBe(true);
  });

  it.each<[string, Partial<ScoringCandidate>]>([
    ['filled', { status: 'FILLED' }],
    ['cancelled', { status: 'CANCELLED' }],
    ['past its expiry', { expiration: new Date(NOW.getTime() - 1) }],
    ['at its expiry', { expiration: NOW }],
    ['on a closed market', { marketStatus: 'CLOSED' }],
    ['on a resolved market', { marketStatus: 'RESOLVED' }],
    ['without a minimum size', { rewardsMinSize: null }],
    ['without a maximum spread', { rewardsMaxSpread: null }],
    ['below the minimum size', { remaining: '4.9999' }],
    ['outside the spread below', { yesPrice: '0.46' }],
    ['outside the spread above', { yesPrice: '0.54' }],
  ])('does not score an order %s', (_name, change) => {
    expect(isScoring(order(change), book, true, NOW)).toBe(false);
  });

  it('is inclusive at the minimum size, the spread edges and an expiry ahead', () => {
    expect(isScoring(order({ remaining: '5' }), book, true, NOW)).toBe(true);
    expect(isScoring(order({ yesPrice: '0.47' }), book, true, NOW)).toBe(true);
    expect(isScoring(order({ yesPrice: '0.53' }), book, true, NOW)).toBe(true);
    expect(isScoring(order({ expiration: new Date(NOW.getTime() + 1) }), book, true, NOW)).toBe(true);
  });

  it('needs both sides of the book, and the heartbeat', () => {
    expect(isScoring(order(), { bestBid: '0.49', bestAsk: null }, true, NOW)).toBe(false);
    expect(isScoring(order(), { bestBid: null, bestAsk: '0.51' }, true, NOW)).toBe(false);
    expect(isScoring(order(), book, false, NOW)).toBe(false);
  });

  it('takes a half-tick midpoint exactly', () => {
    // bid 0.49, ask 0.52: midpoint 0.505; 0.475 away at spread 0.03 is 0.03 exactly.
    const wide = { bestBid: '0.49', bestAsk: '0.52' };
    expect(doubledDistanceFromMidpoint('0.47', wide)).toBe(700n); // 2 x 0.035 in 0.0001 units
    expect(isScoring(order({ yesPrice: '0.48', rewardsMaxSpread: '0.025' }), wide, true, NOW)).toBe(true);
    expect(isScoring(order({ yesPrice: '0.48', rewardsMaxSpread: '0.0249' }), wide, true, NOW)).toBe(false);
    expect(isScoring(order({ yesPrice: '0.47', rewardsMaxSpread: '0.035' }), wide, true, NOW)).toBe(true);
  });

  it('compares sizes exactly at eight places', () => {
    expect(isScoring(order({ remaining: '0.0001', rewardsMinSize: '0.00010000' }), book, true, NOW)).toBe(true);
    expect(isScoring(order({ remaining: '0.0001', rewardsMinSize: '0.00010001' }), book, true, NOW)).toBe(false);
    expect(isScoring(order({ rewardsMinSize: '0' }), book, true, NOW)).toBe(true);
  });
});

import { describe, expect, it } from 'vitest';
import { DomainError } from '../errors.js';
import { checkFeesAreZero, FEE_FIELDS, parseTerms } from './input.js';

/** The exchange is fee-free: fee fields of a payload are accepted only as zero. */
describe('checkFeesAreZero', () => {
  it.each(FEE_FIELDS)('accepts %s as 0, "0", "0.00", null or absent', (field) => {
    for (const value of [0, '0', '0.00', '00', null, undefined]) expect(() => checkFeesAreZero({ [field]: value })).not.toThrow();
  });

  it.each(FEE_FIELDS)('refuses any other %s, naming it', (field) => {
    for (const value of [1, -1, 0.5, '1', '0.01', '-0', ' 1', 'zero', '', true, {}, []]) {
      let error: unknown;
      try {
        checkFeesAreZero({ [field]: value });
      } catch (caught) {
        error = caught;
      }
      expect(error, JSON.stringify(value)).toBeInstanceOf(DomainError);
      expect((error as DomainError).code).toBe('invalid_request');
      expect((error as DomainError).message).toMatch(new RegExp(`^${field} must be 0: the exchange is fee-free`));
      expect((error as DomainError).details).toEqual([{ location: 'body', path: field, message: expect.any(String) as string }]);
    }
  });

  it('is checked by every preview and placement (parseTerms)', () => {
    expect(() => parseTerms({ ticker: 'M', side: 'yes', count: '1', price: '0.5', builder_taker_fee_bps: 25 })).toThrow(/builder_taker_fee_bps must be 0/);
    expect(parseTerms({ ticker: 'M', side: 'yes', count: '1', price: '0.5', feeRateBps: '0' }).price).toBe(50);
  });
});

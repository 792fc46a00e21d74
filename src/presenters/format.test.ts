import { Decimal } from 'decimal.js';
import { describe, expect, it } from 'vitest';
import { decimal, price } from './format.js';

const SAMPLES = [
  '0', '0.0000', '1', '10', '1520.50000000', '1520.00000000', '0.62', '0.6200', '0.6250', '0.005', '12.3456',
  '-3.1400', '-0.5000', '-0', '-0.00', '100', '99.99', '1e3', '1.5E-2', '0.999', '0.9950', '123456789012345678901234567890.123456789',
];

describe('decimal', () => {
  it('cuts trailing zeros exactly as decimal.js does', () => {
    for (const value of SAMPLES) expect(decimal(value), value).toBe(new Decimal(value).toFixed());
    expect(decimal('1520.50000000')).toBe('1520.5');
    expect(decimal('7.000')).toBe('7');
  });
});

describe('price', () => {
  it('gives two places exactly as decimal.js does, rounding when the text has other digits', () => {
    for (const value of SAMPLES) expect(price(value), value).toBe(new Decimal(value).toFixed(2));
    expect(price('0.6200')).toBe('0.62');
    expect(price('0.625')).toBe('0.63');
    expect(price('1')).toBe('1.00');
  });
});

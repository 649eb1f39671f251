import { describe, expect, it } from '@jest/globals';
import { discountPercent } from '../src/index.js';

describe('discountPercent', () => {
  it.each([
    [5_000, 10_000, 50],
    [6_667, 10_000, 33],
    [6_666, 10_000, 33],
    [1, 3, 66],
    [10_000, 10_000, 0],
    [12_000, 10_000, 0],
  ])('price %i of retail %i is %i%% off, floored and never negative', (priceCents, retail, expected) => {
    expect(discountPercent(priceCents, retail)).toBe(expected);
  });

  it('is undefined without a positive original retail price', () => {
    expect(discountPercent(100, undefined)).toBeUndefined();
    expect(discountPercent(100, 0)).toBeUndefined();
  });
});

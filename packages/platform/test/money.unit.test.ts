import { describe, expect, it } from '@jest/globals';
import { dollarsToCents, hasAtMostTwoDecimals } from '../src/money.js';

describe('dollarsToCents', () => {
  it.each([
    [1, 100],
    [0, 0],
    [19.99, 1999],
    [0.285, 29],
    [1.005, 101],
    [2.675, 268],
    [1234567.89, 123456789],
    [-1.005, -101],
  ])('%p dollars is %p cents', (dollars, cents) => {
    expect(dollarsToCents(dollars)).toBe(cents);
  });

  it('refuses non-finite amounts', () => {
    expect(() => dollarsToCents(Number.NaN)).toThrow(RangeError);
    expect(() => dollarsToCents(Number.POSITIVE_INFINITY)).toThrow(RangeError);
  });
});

describe('hasAtMostTwoDecimals', () => {
  it('accepts cents precision and rejects finer', () => {
    expect(hasAtMostTwoDecimals(19.99)).toBe(true);
    expect(hasAtMostTwoDecimals(0.1 + 0.2)).toBe(true);
    expect(hasAtMostTwoDecimals(1.001)).toBe(false);
  });
});

import { describe, expect, it } from '@jest/globals';
import { throughputRatio } from '../src/same-run-limit.js';

describe('throughputRatio', () => {
  it('is the share of the limit, to three significant digits', () => {
    expect(throughputRatio(64.6, 5_393)).toBe(0.012);
    expect(throughputRatio(307, 307)).toBe(1);
    expect(throughputRatio(2, 3)).toBe(0.667);
  });

  it('keeps a small share readable: 10 orders/s against 6,813/s is not 0.001', () => {
    expect(throughputRatio(10, 6_813)).toBe(0.00147);
  });

  it('does not divide by a limit that measured nothing', () => {
    expect(throughputRatio(12, 0)).toBe(12);
  });
});

import { describe, expect, it } from '@jest/globals';
import { throughputRatio } from '../src/same-run-limit.js';

describe('throughputRatio', () => {
  it('is the share of the limit, to three decimals', () => {
    expect(throughputRatio(64.6, 5_393)).toBe(0.012);
    expect(throughputRatio(307, 307)).toBe(1);
  });

  it('does not divide by a limit that measured nothing', () => {
    expect(throughputRatio(12, 0)).toBe(12);
  });
});

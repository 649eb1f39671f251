import { describe, expect, it } from '@jest/globals';
import { summarize } from '../src/stats.js';

describe('summarize', () => {
  it('takes nearest-rank percentiles', () => {
    const samples = Array.from({ length: 100 }, (_, i) => i + 1);
    expect(summarize(samples)).toEqual({ count: 100, p50: 50, p95: 95, p99: 99, max: 100, mean: 50.5 });
  });
  it('handles a single sample and unsorted input', () => {
    expect(summarize([3.14159])).toMatchObject({ p50: 3.1, p99: 3.1, max: 3.1 });
    expect(summarize([5, 1, 3]).p50).toBe(3);
  });
  it('refuses an empty run', () => {
    expect(() => summarize([])).toThrow('no samples');
  });
});

import { describe, expect, it } from '@jest/globals';
import { memoryTrend, slopePerMinute } from '../src/mcp/memory-trend.js';

describe('memoryTrend', () => {
  it('reads the slope per minute after warm-up', () => {
    // 100 MiB growing to 130 in the first minute (warm-up), then 1 MiB a minute.
    const samples = [
      { atMs: 0, rss: 100 },
      { atMs: 60_000, rss: 130 },
      { atMs: 120_000, rss: 131 },
      { atMs: 180_000, rss: 132 },
      { atMs: 240_000, rss: 133 },
    ];
    expect(memoryTrend(samples, 60_000)).toEqual({
      first: 100,
      afterWarmUp: 130,
      last: 133,
      max: 133,
      steadySlopePerMinute: 1,
      samples: 5,
    });
  });

  it('says nothing, and no slope, without samples (a soak shorter than the sampling interval)', () => {
    expect(memoryTrend([], 0)).toEqual({
      first: undefined,
      afterWarmUp: undefined,
      last: undefined,
      max: undefined,
      steadySlopePerMinute: 0,
      samples: 0,
    });
    expect(slopePerMinute([{ atMs: 5_000, rss: 200 }])).toBe(0);
  });
});

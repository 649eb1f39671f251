import { describe, expect, it } from '@jest/globals';
import { CATEGORIES, CONDITIONS } from '@marketplace/vocabulary';
import {
  fanoutWorkload,
  firstAttemptLatencies,
  latencyOverFloor,
} from '../src/subscription/fanout-workload.js';
import { summarize } from '../src/stats.js';

describe('fanoutWorkload', () => {
  it('draws the same searches and listings on every run, from its vocabulary', () => {
    const draw = () => {
      const workload = fanoutWorkload(5);
      return { searches: Array.from({ length: 50 }, workload.savedSearch), listing: workload.listing() };
    };
    const first = draw();
    expect(draw()).toEqual(first);
    const words = ['word0', 'word1', 'word2', 'word3', 'word4'];
    for (const search of first.searches) {
      expect(words).toContain(search.search);
      expect(CATEGORIES).toContain(search.category);
      if (search.condition !== undefined) expect(CONDITIONS).toContain(search.condition);
    }
    expect(first.searches.some((search) => search.condition === undefined)).toBe(true);
    expect(first.listing.name).toMatch(/^Lot of word[0-4] and word[0-4]$/);
  });
});

describe('firstAttemptLatencies', () => {
  it("counts each delivery's first attempt from its listing's publication, even one before it", () => {
    const published = new Map([
      ['product_1', 100],
      ['product_2', 200],
    ]);
    const latencies = firstAttemptLatencies(
      [
        { deliveryId: 'a', productId: 'product_1', arrivedAt: 150 },
        { deliveryId: 'b', productId: 'product_2', arrivedAt: 199 },
        { deliveryId: 'a', productId: 'product_1', arrivedAt: 400 },
        { deliveryId: 'c', productId: 'product_9', arrivedAt: 500 },
      ],
      published,
    );
    expect(latencies).toEqual([50, -1]);
  });
});

describe('latencyOverFloor', () => {
  it('is how many times the floor each percentile took', () => {
    expect(latencyOverFloor(summarize([100, 200, 4_000]), summarize([2, 4, 10]))).toEqual({
      p50: 50,
      p99: 400,
    });
  });
});

import { describe, expect, it } from '@jest/globals';
import { CATEGORIES } from '@marketplace/vocabulary';
import {
  generateListings,
  searchDocumentOf,
  semanticBenchQueries,
} from '../src/catalog/generated-listings.js';

describe('semanticBenchQueries', () => {
  it('is deterministic by seed', () => {
    expect(semanticBenchQueries(200)).toEqual(semanticBenchQueries(200));
    expect(semanticBenchQueries(200, 3)).toEqual(semanticBenchQueries(200, 3));
    expect(semanticBenchQueries(200, 3)).not.toEqual(semanticBenchQueries(200));
  });

  it('gives valid request bodies, some filtered by category, by maximum price or both', () => {
    const queries = semanticBenchQueries(1_000);
    for (const { query, category, max_price } of queries) {
      expect(query.trim().length).toBeGreaterThan(0);
      expect(query.length).toBeLessThanOrEqual(1_000);
      if (category !== undefined) expect(CATEGORIES).toContain(category);
      if (max_price !== undefined) expect(Number.isInteger(max_price) && max_price > 0).toBe(true);
    }
    const share = (test: (q: (typeof queries)[number]) => boolean) => queries.filter(test).length / 1_000;
    expect(share((q) => q.category === undefined && q.max_price === undefined)).toBeGreaterThan(0.4);
    expect(share((q) => q.category !== undefined && q.max_price === undefined)).toBeGreaterThan(0.15);
    expect(share((q) => q.category === undefined && q.max_price !== undefined)).toBeGreaterThan(0.1);
    expect(share((q) => q.category !== undefined && q.max_price !== undefined)).toBeGreaterThan(0.05);
  });

  it('asks in plain words for goods the generated catalog holds', () => {
    const titles = generateListings(5_000).map((listing) => listing.title.toLowerCase());
    for (const { query } of semanticBenchQueries(50)) {
      const words = query.toLowerCase().split(' ');
      expect(titles.some((title) => words.some((word) => word.length > 3 && title.includes(word)))).toBe(
        true,
      );
    }
  });
});

describe('searchDocumentOf', () => {
  it('hands the indexes the listing, public when promoted', () => {
    const [listing] = generateListings(1);
    expect(searchDocumentOf(listing!)).toMatchObject({
      id: 'product_1',
      title: listing!.title,
      public: listing!.promotePublicly,
      payload: listing,
    });
  });
});

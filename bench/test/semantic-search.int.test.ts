import { beforeAll, describe, expect, it } from '@jest/globals';
import { SHARED_EMBEDDINGS_CACHE_DIR } from '@marketplace/e2e';
import { loadLocalEmbedder, type Embedder } from '@marketplace/embeddings';
import { GOODS_KINDS } from '../src/semantic/labelled-catalog.js';
import { labelledListings, measureSemanticSearch } from '../src/semantic/semantic-search.bench.js';

/** Words that carry no meaning of their own; a query may share these with a title. */
const FUNCTION_WORDS = new Set([
  'a',
  'an',
  'and',
  'at',
  'for',
  'in',
  'of',
  'on',
  'the',
  'to',
  'up',
  'with',
  'into',
]);
const wordsOf = (text: string): string[] =>
  (text.toLowerCase().match(/[\p{L}\p{N}]+/gu) ?? []).filter((word) => !FUNCTION_WORDS.has(word));

describe('labelled semantic-search set', () => {
  it('has at least 50 queries, none sharing a word with the listings it is labelled with', () => {
    expect(GOODS_KINDS.length).toBeGreaterThanOrEqual(50);
    expect(new Set(GOODS_KINDS.map((goods) => goods.kind)).size).toBe(GOODS_KINDS.length);
    const listings = labelledListings(GOODS_KINDS.length * 30);
    for (const goods of GOODS_KINDS) {
      const listingWords = new Set(
        listings
          .filter((listing) => listing.payload.kind === goods.kind)
          .flatMap((listing) => wordsOf(`${listing.title} ${listing.description}`)),
      );
      expect({
        query: goods.query,
        shared: wordsOf(goods.query).filter((word) => listingWords.has(word)),
      }).toEqual({
        query: goods.query,
        shared: [],
      });
    }
  });
});

// The bench's measurement on a small catalog with the real local embedder: deterministic (the embedder and the
// catalog are, and at this size the HNSW graph finds the exact neighbours). The figures at 100k are the bench's.
describe('semantic search quality, small catalog, local embedder', () => {
  let embedder: Embedder;
  // The table the end-to-end marketplaces use: the conversion itself is packages/embeddings' test.
  beforeAll(async () => {
    embedder = await loadLocalEmbedder({ cacheDir: SHARED_EMBEDDINGS_CACHE_DIR });
  }, 60_000);

  it('finds the intended goods far above chance, and the approximate index agrees with exact search', async () => {
    const figures = await measureSemanticSearch(embedder, {
      listings: GOODS_KINDS.length * 20,
      latencyRounds: 1,
    });
    expect(figures.queries).toBe(GOODS_KINDS.length);
    // Chance is 1/55 ≈ 0.018. The bar is 0.8: the local word-vector embedder does not reach it (README).
    // 0.22 here before the common directions were removed from the word vectors, 0.34 since.
    expect(figures.recallAt10).toBeGreaterThanOrEqual(0.3);
    expect(figures.annRecallAt10).toBeGreaterThanOrEqual(0.95);
  }, 60_000);
});

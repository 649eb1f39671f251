import { describe, expect, it } from '@jest/globals';
import { SEMANTIC_SEARCH_FEEDBACK, type VectorIndex, type VectorQuery } from '@marketplace/search';
import { decodeListingEvent } from '../src/adapters/listing-event.decoder.js';
import { catalogStats } from '../src/application/catalog-stats.query.js';
import { listPublicProducts } from '../src/application/list-public-products.query.js';
import { semanticSearch } from '../src/application/semantic-search.query.js';
import type { CatalogProduct } from '../src/domain/catalog-product.js';
import { conceptEmbedder } from './support/concept-embedder.js';
import { listingCreated, listingMessage } from './support/listing-events.js';

const productOf = (n: number): CatalogProduct =>
  decodeListingEvent(listingCreated(listingMessage(n)).value)!.product;

describe('listPublicProducts', () => {
  const pager = (numbers: number[]) => {
    const asked: [number, number][] = [];
    return {
      asked,
      page: async (after: number, limit: number) => {
        asked.push([after, limit]);
        return numbers
          .filter((n) => n > after)
          .slice(0, limit)
          .map(productOf);
      },
    };
  };

  it('asks one more than the page to know whether another follows, and points after the last one sent', async () => {
    const { asked, page } = pager([3, 8, 12]);

    const first = await listPublicProducts(page, { cursor: '', limit: 2 });
    const last = await listPublicProducts(page, { cursor: first.nextCursor, limit: 2 });

    expect(asked).toEqual([
      [0, 3],
      [8, 3],
    ]);
    expect(first.products.map((p) => p.id)).toEqual(['product_3', 'product_8']);
    expect(first.nextCursor).toBe('8');
    expect(last).toEqual({ products: [productOf(12)], nextCursor: '' });
  });

  it('rejects a foreign cursor and a page over 200, naming both', async () => {
    await expect(listPublicProducts(pager([]).page, { cursor: 'product_8', limit: 0 })).rejects.toMatchObject(
      {
        kind: 'validation',
        violations: [expect.objectContaining({ path: 'cursor' }), expect.objectContaining({ path: 'limit' })],
      },
    );
    await expect(listPublicProducts(pager([]).page, { cursor: '', limit: 201 })).rejects.toMatchObject({
      violations: [expect.objectContaining({ path: 'limit' })],
    });
  });
});

describe('catalogStats', () => {
  it('totals the grouped counts by category and by condition, every value listed', async () => {
    const stats = await catalogStats(async () => [
      { category: 'tools', condition: 'salvage', products: 3, inStock: 2 },
      { category: 'tools', condition: 'overstock', products: 1, inStock: 1 },
      { category: 'toys', condition: '', products: 2, inStock: 0 },
    ]);

    expect(stats).toMatchObject({ publicProducts: 6, publicInStockProducts: 3 });
    expect(stats.byCategory).toHaveLength(11);
    expect(stats.byCategory.find((row) => row.id === 'tools')).toEqual({
      id: 'tools',
      publicProducts: 4,
      publicInStockProducts: 3,
    });
    expect(stats.byCategory.find((row) => row.id === 'toys')).toMatchObject({ publicProducts: 2 });
    expect(stats.byCondition.map((row) => [row.id, row.publicProducts])).toEqual([
      ['salvage', 3],
      ['customer_returns', 0],
      ['shelf_pulls', 0],
      ['overstock', 1],
      ['new_or_refurbished', 0],
    ]);
  });
});

describe('semanticSearch', () => {
  const recordingVectors = () => {
    const queries: VectorQuery[] = [];
    const vectors = {
      search: async (query: VectorQuery) => {
        queries.push(query);
        return [{ id: 'product_1', similarity: 0.5, document: { payload: productOf(1) } }];
      },
    } as unknown as VectorIndex<CatalogProduct>;
    return { queries, vectors };
  };

  it('embeds the query and searches public listings with the filters', async () => {
    const { queries, vectors } = recordingVectors();

    const matches = await semanticSearch(
      { embedder: conceptEmbedder(), vectors },
      { query: 'drill', category: 'tools', maxPriceCents: 500, limit: 5 },
    );

    expect(matches).toEqual([{ product: productOf(1), similarity: 0.5 }]);
    expect(queries[0]).toMatchObject({
      filters: { visibility: 'public', category: 'tools', maxPriceCents: 500 },
      limit: 5,
      // Pseudo-relevance feedback, as the bench measures it (bench/README.md).
      feedback: SEMANTIC_SEARCH_FEEDBACK,
    });
    expect(queries[0]!.vector[0]).toBeGreaterThan(0.9);
  });

  it('is unavailable without an embedder or when the provider fails, after checking the input', async () => {
    await expect(semanticSearch(undefined, { query: 'drill', limit: 10 })).rejects.toMatchObject({
      kind: 'unavailable',
    });
    await expect(semanticSearch(undefined, { query: '', limit: 10 })).rejects.toMatchObject({
      kind: 'validation',
    });
    const embedder = conceptEmbedder();
    embedder.failing = true;
    await expect(
      semanticSearch({ embedder, vectors: recordingVectors().vectors }, { query: 'drill', limit: 10 }),
    ).rejects.toMatchObject({ kind: 'unavailable' });
  });
});

import { describe, expect, it } from '@jest/globals';
import { AppError } from '@marketplace/platform';
import { createEmbeddedSearchIndex } from '@marketplace/search';
import { decodeListingEvent } from '../src/adapters/listing-event.decoder.js';
import { getProduct } from '../src/application/get-product.query.js';
import { toSearchDocument } from '../src/application/product-search-document.js';
import type { SearchProductsInput } from '../src/application/search-products.query.js';
import { searchProducts, toSearchQuery } from '../src/application/search-products.query.js';
import type { CatalogProduct } from '../src/domain/catalog-product.js';
import { listingCreated, listingMessage } from './support/listing-events.js';

const productOf = (...args: Parameters<typeof listingMessage>): CatalogProduct =>
  decodeListingEvent(listingCreated(listingMessage(...args)).value)!.product;

const search = (overrides: Partial<SearchProductsInput> = {}): SearchProductsInput => ({
  query: '',
  limit: 20,
  offset: 0,
  ...overrides,
});

const violationsOf = (work: () => unknown): unknown => {
  try {
    work();
  } catch (error) {
    if (error instanceof AppError && error.kind === 'validation') return error.violations;
    throw error;
  }
  throw new Error('expected a validation error');
};

describe('toSearchQuery', () => {
  it('asks the index for public listings only, with the filters given', () => {
    expect(
      toSearchQuery(
        search({ query: 'usb', category: 'tools', condition: 'salvage', minPriceCents: 0, maxPriceCents: 5 }),
      ),
    ).toEqual({
      text: 'usb',
      filters: {
        visibility: 'public',
        category: 'tools',
        condition: 'salvage',
        minPriceCents: 0,
        maxPriceCents: 5,
      },
      limit: 20,
      offset: 0,
    });
  });

  it.each([
    ['a limit of 0', { limit: 0 }, [{ path: 'limit', message: 'must be at least 1' }]],
    ['a limit of 101', { limit: 101 }, [{ path: 'limit', message: 'must be at most 100' }]],
    ['a negative offset', { offset: -1 }, [{ path: 'offset', message: 'must not be negative' }]],
    [
      'an unknown category',
      { category: 'cars' },
      [{ path: 'category', message: expect.stringContaining('electronics') }],
    ],
    [
      'an unknown condition',
      { condition: 'used' },
      [{ path: 'condition', message: expect.stringContaining('salvage') }],
    ],
    ['a negative price', { minPriceCents: -1 }, [{ path: 'minPriceCents', message: 'must not be negative' }]],
    [
      'a fractional price',
      { maxPriceCents: 1.5 },
      [{ path: 'maxPriceCents', message: 'must be a whole number of cents' }],
    ],
    [
      'an inverted price range',
      { minPriceCents: 500, maxPriceCents: 100 },
      [{ path: 'minPriceCents', message: 'must not exceed maxPriceCents' }],
    ],
    [
      'a query of 33 words',
      { query: 'word '.repeat(33) },
      [{ path: 'query', message: 'must be at most 32 words' }],
    ],
    [
      'a query of 1001 characters',
      { query: 'x'.repeat(1_001) },
      [{ path: 'query', message: 'must be at most 1000 characters' }],
    ],
  ])('rejects %s, naming the field', (_name, overrides, violations) => {
    expect(violationsOf(() => toSearchQuery(search(overrides)))).toEqual(violations);
  });

  it('names every offending field at once', () => {
    expect(violationsOf(() => toSearchQuery(search({ limit: 0, offset: -1 })))).toHaveLength(2);
  });
});

describe('searchProducts', () => {
  it('answers a page of public products with the total of all matches', async () => {
    const index = createEmbeddedSearchIndex<CatalogProduct>();
    await index.upsertMany(
      [
        productOf(1, { name: 'USB-C charger' }),
        productOf(2, { name: 'USB-C cable' }),
        productOf(3, { name: 'USB-C hub', promotePublicly: false }),
        productOf(4, { name: 'HDMI cable' }),
      ].map(toSearchDocument),
    );

    const page = await searchProducts(index, search({ query: 'usb-c', limit: 1 }));

    expect(page.total).toBe(2);
    expect(page.products.map((product) => product.id)).toEqual(['product_2']);
  });
});

describe('getProduct', () => {
  const hidden = productOf(1, { promotePublicly: false, sellerAccountId: 7 });
  const promoted = productOf(2);
  const lookup = async (id: string): Promise<CatalogProduct | undefined> =>
    [hidden, promoted].find((product) => product.id === id);

  it('returns a promoted listing to anyone', async () => {
    await expect(getProduct(lookup, { productId: 'product_2', viewer: {} })).resolves.toEqual(promoted);
  });

  it('returns a listing that was not promoted to its seller, and not_found to anyone else', async () => {
    await expect(
      getProduct(lookup, { productId: 'product_1', viewer: { sellerAccountId: 7 } }),
    ).resolves.toEqual(hidden);
    await expect(
      getProduct(lookup, { productId: 'product_1', viewer: { sellerAccountId: 8 } }),
    ).rejects.toMatchObject({ kind: 'not_found', message: 'product product_1 not found' });
    await expect(getProduct(lookup, { productId: 'product_1', viewer: {} })).rejects.toMatchObject({
      kind: 'not_found',
    });
  });

  it('answers not_found for an unknown product and a validation error for a malformed id', async () => {
    await expect(getProduct(lookup, { productId: 'product_9', viewer: {} })).rejects.toMatchObject({
      kind: 'not_found',
    });
    await expect(getProduct(lookup, { productId: 'nine', viewer: {} })).rejects.toMatchObject({
      kind: 'validation',
      violations: [{ path: 'productId', message: 'must look like product_<number>' }],
    });
  });
});

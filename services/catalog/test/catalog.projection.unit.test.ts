import { describe, expect, it } from '@jest/globals';
import { toSearchDocument } from '../src/application/product-search-document.js';
import type { CatalogProduct } from '../src/domain/catalog-product.js';
import { availabilityOf } from '../src/domain/catalog-product.js';
import { projectListingFact } from '../src/domain/catalog.projection.js';
import type { ListingFact } from '../src/domain/listing-fact.js';
import { ANONYMOUS_VIEWER, isPublic, isVisibleTo } from '../src/domain/product-visibility.js';

const product = (overrides: Partial<CatalogProduct> = {}): CatalogProduct => ({
  id: 'product_1',
  sellerAccountId: 7,
  title: 'Pallet of USB-C chargers',
  description: '480 units, 65 W',
  sku: 'SKU-1',
  category: 'electronics',
  condition: 'overstock',
  priceCents: 1_250,
  currency: 'USD',
  quantity: 480,
  minOrderQuantity: 10,
  minQuoteQuantity: 0,
  brand: 'Anker',
  imageUrls: ['https://images.example/1.jpg'],
  instantCheckout: false,
  promotePublicly: true,
  createdAtMs: 1_000,
  updatedAtMs: 1_000,
  version: 1,
  ...overrides,
});

const created = (version: number, overrides: Partial<CatalogProduct> = {}): ListingFact => ({
  type: 'ListingCreated',
  eventId: `event-${version}`,
  productId: 'product_1',
  version,
  occurredAtMs: 1_000,
  product: product({ version, ...overrides }),
});

describe('projectListingFact', () => {
  it('replaces the product with a later change (price, stock sold out) and ignores an older one', () => {
    const changed: ListingFact = { ...created(3, { priceCents: 990, quantity: 0 }), type: 'ListingChanged' };
    const afterChange = projectListingFact(product({ version: 1 }), changed);
    expect(afterChange).toMatchObject({ priceCents: 990, quantity: 0, version: 3 });
    expect(availabilityOf(afterChange!)).toBe('out_of_stock');
    expect(projectListingFact(product({ version: 4 }), changed)).toBeUndefined();
  });

  it('given no product, when ListingCreated, then the product is the listing at the event version', () => {
    expect(projectListingFact(undefined, created(1))).toEqual(product({ version: 1 }));
  });

  it('takes the version from the event, not from the carried state', () => {
    const fact: ListingFact = { ...created(3), product: product({ version: 1 }) };

    expect(projectListingFact(undefined, fact)?.version).toBe(3);
  });

  it('given version 1, when the same event comes again, then nothing changes', () => {
    expect(projectListingFact(product({ version: 1 }), created(1))).toBeUndefined();
  });

  it('given version 2, when an older event arrives late, then nothing changes', () => {
    expect(projectListingFact(product({ version: 2, title: 'Newer' }), created(1))).toBeUndefined();
  });

  it('given version 1, when a newer state-carrying event arrives, then it replaces the product', () => {
    expect(projectListingFact(product({ version: 1 }), created(2, { title: 'Renamed' }))).toEqual(
      product({ version: 2, title: 'Renamed' }),
    );
  });
});

describe('visibility', () => {
  const promoted = product({ promotePublicly: true, sellerAccountId: 7 });
  const inAppOnly = product({ promotePublicly: false, sellerAccountId: 7 });

  it('shows a publicly promoted listing to everyone', () => {
    expect(isPublic(promoted)).toBe(true);
    expect(isVisibleTo(promoted, ANONYMOUS_VIEWER)).toBe(true);
    expect(isVisibleTo(promoted, { sellerAccountId: 8 })).toBe(true);
  });

  it('shows a listing that was not promoted only to its own seller', () => {
    expect(isPublic(inAppOnly)).toBe(false);
    expect(isVisibleTo(inAppOnly, { sellerAccountId: 7 })).toBe(true);
    expect(isVisibleTo(inAppOnly, { sellerAccountId: 8 })).toBe(false);
    expect(isVisibleTo(inAppOnly, ANONYMOUS_VIEWER)).toBe(false);
  });
});

describe('toSearchDocument', () => {
  it('indexes title and description, filters on category, condition and price, and carries the product', () => {
    const document = toSearchDocument(product({ version: 4 }));

    expect(document).toEqual({
      id: 'product_1',
      version: 4,
      title: 'Pallet of USB-C chargers',
      description: '480 units, 65 W',
      category: 'electronics',
      condition: 'overstock',
      priceCents: 1_250,
      public: true,
      createdAtMs: 1_000,
      payload: product({ version: 4 }),
    });
  });

  it('marks a listing that was not promoted as not public', () => {
    expect(toSearchDocument(product({ promotePublicly: false })).public).toBe(false);
  });
});

describe('availabilityOf', () => {
  it('is in stock with units left and out of stock at zero', () => {
    expect(availabilityOf({ quantity: 1 })).toBe('in_stock');
    expect(availabilityOf({ quantity: 0 })).toBe('out_of_stock');
  });
});

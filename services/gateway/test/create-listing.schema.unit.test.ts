import { describe, expect, it } from '@jest/globals';
import { LISTING_LIMITS } from '@marketplace/vocabulary';
import { createListingBodySchema } from '../src/contexts/listings/create-listing.schema.js';
import { violationsOf } from '../src/edge/schemas/validate.js';
import { listingDraftOf } from '../src/contexts/listings/create-listing.schema.js';

const minimal = { name: 'Pallet of earbuds', description: 'Customer returns, tested' };

const violations = (body: unknown) => {
  const result = createListingBodySchema.safeParse(body);
  if (result.success) throw new Error(`accepted ${JSON.stringify(body)}`);
  return violationsOf(result.error);
};
const pathsOf = (body: unknown): string[] => violations(body).map(({ path }) => path);

describe('POST /api/products body', () => {
  it('needs only name and description; absent fields stay absent for the listing service to default', () => {
    const body = createListingBodySchema.parse(minimal);
    expect(listingDraftOf(body)).toEqual({
      ...minimal,
      sku: undefined,
      category: undefined,
      condition: undefined,
      priceCents: undefined,
      quantity: undefined,
      minOrderQuantity: undefined,
      minQuoteQuantity: undefined,
      brand: undefined,
      imageUrl: undefined,
      galleryImageUrls: [],
      promotePublicly: false,
      originalRetailPriceCents: undefined,
      instantCheckout: false,
    });
  });

  it('converts dollar prices to cents, rounding on the decimal value', () => {
    const body = createListingBodySchema.parse({ ...minimal, price: 12.5, originalRetailPrice: 0.29 });
    expect(listingDraftOf(body)).toMatchObject({ priceCents: 1250, originalRetailPriceCents: 29 });
  });

  it('treats null as not sent', () => {
    const body = createListingBodySchema.parse({
      ...minimal,
      price: null,
      brand: null,
      galleryImageUrls: null,
    });
    expect(listingDraftOf(body)).toMatchObject({
      priceCents: undefined,
      brand: undefined,
      galleryImageUrls: [],
    });
  });

  it('passes every field of docs/specification.md, "Listings" through', () => {
    const full = {
      ...minimal,
      sku: 'ERP-1',
      category: 'home_goods',
      condition: 'overstock',
      price: 55,
      quantity: 12,
      minOrderQuantity: 2,
      minQuoteQuantity: 5,
      brand: 'Tarnwick',
      imageUrl: 'https://img.test/a.jpg',
      galleryImageUrls: ['https://img.test/b.jpg'],
      promotePublicly: true,
      instantCheckout: true,
    };
    expect(listingDraftOf(createListingBodySchema.parse(full))).toMatchObject({
      sku: 'ERP-1',
      category: 'home_goods',
      condition: 'overstock',
      priceCents: 5500,
      quantity: 12,
      minOrderQuantity: 2,
      minQuoteQuantity: 5,
      brand: 'Tarnwick',
      imageUrl: 'https://img.test/a.jpg',
      galleryImageUrls: ['https://img.test/b.jpg'],
      promotePublicly: true,
      instantCheckout: true,
    });
  });

  it('requires a name and a non-empty description', () => {
    expect(pathsOf({}).sort()).toEqual(['description', 'name']);
    expect(pathsOf({ ...minimal, description: '   ' })).toEqual(['description']);
    expect(pathsOf({ ...minimal, name: '' })).toEqual(['name']);
  });

  it('counts characters as code points against the spec limits', () => {
    const emoji = '📦';
    expect(
      createListingBodySchema.safeParse({ ...minimal, name: emoji.repeat(LISTING_LIMITS.nameMaxLength) })
        .success,
    ).toBe(true);
    expect(pathsOf({ ...minimal, name: 'x'.repeat(LISTING_LIMITS.nameMaxLength + 1) })).toEqual(['name']);
    expect(pathsOf({ ...minimal, description: 'x'.repeat(LISTING_LIMITS.descriptionMaxLength + 1) })).toEqual(
      ['description'],
    );
  });

  it('allows at most 8 gallery images and names a bad item by index', () => {
    const urls = (n: number) => Array.from({ length: n }, (_, i) => `https://img.test/${i}.jpg`);
    expect(createListingBodySchema.safeParse({ ...minimal, galleryImageUrls: urls(8) }).success).toBe(true);
    expect(pathsOf({ ...minimal, galleryImageUrls: urls(9) })).toEqual(['galleryImageUrls']);
    expect(pathsOf({ ...minimal, galleryImageUrls: ['https://img.test/a.jpg', 7] })).toEqual([
      'galleryImageUrls/1',
    ]);
  });

  it.each([
    ['price', '12'],
    ['price', 1.234],
    ['price', LISTING_LIMITS.maxPriceCents / 100 + 1],
    ['quantity', 1.5],
    ['quantity', '3'],
    ['minOrderQuantity', true],
    ['category', 'furniture'],
    ['condition', 'new'],
    ['promotePublicly', 'yes'],
    ['imageUrl', 42],
    ['sku', 'x'.repeat(LISTING_LIMITS.skuMaxLength + 1)],
    ['brand', 'x'.repeat(LISTING_LIMITS.brandMaxLength + 1)],
  ])('rejects %s = %p', (field, value) => {
    expect(pathsOf({ ...minimal, [field]: value })).toEqual([field]);
  });

  it('rejects unknown fields by name, so a misspelt flag is not silently dropped', () => {
    expect(violations({ ...minimal, promote_publicly: true, colour: 'red' })).toEqual([
      { path: 'promote_publicly', message: 'is not a known field' },
      { path: 'colour', message: 'is not a known field' },
    ]);
  });

  it('rejects a body that is not an object', () => {
    for (const body of [[], 'listing', 42, null]) expect(pathsOf(body)).toEqual(['(root)']);
  });
});

import { describe, expect, it } from '@jest/globals';
import type { FieldViolation } from '@marketplace/platform';
import { AppError } from '@marketplace/platform';
import { CATEGORIES, LISTING_LIMITS } from '@marketplace/vocabulary';
import type { ListingDraft } from '../src/domain/listing.commands.js';
import {
  bulkChangesOf,
  checkBulkValue,
  generatedSku,
  validateNewListing,
} from '../src/domain/listing.rules.js';

const SELLER = 7;
const draft: ListingDraft = { name: 'Pallet of USB-C chargers', description: '480 units, 65 W, boxed' };
const url = (n: number): string => `https://img.example.com/${n}.jpg`;

/** The violations the rules report for the base draft with `patch` applied; [] when it passes. */
const violationsOf = (patch: Partial<ListingDraft>, sellerAccountId = SELLER): readonly FieldViolation[] => {
  try {
    validateNewListing(sellerAccountId, { ...draft, ...patch });
    return [];
  } catch (error) {
    if (error instanceof AppError && error.kind === 'validation') return error.violations;
    throw error;
  }
};

describe('listing rules', () => {
  it('applies the defaults of docs/specification.md, "Listings" to a draft with only the required fields', () => {
    expect(validateNewListing(SELLER, draft)).toEqual({
      sellerAccountId: SELLER,
      name: 'Pallet of USB-C chargers',
      description: '480 units, 65 W, boxed',
      sku: undefined,
      category: 'electronics',
      condition: undefined,
      priceCents: 100,
      quantity: 1,
      minOrderQuantity: 1,
      minQuoteQuantity: 1,
      brand: undefined,
      imageUrl: undefined,
      galleryImageUrls: [],
      originalRetailPriceCents: undefined,
      instantCheckout: false,
      promotePublicly: false,
    });
  });

  it('keeps every field a seller sends', () => {
    const full: ListingDraft = {
      ...draft,
      sku: 'CHG-65',
      category: 'tools',
      condition: 'overstock',
      priceCents: 1_250,
      quantity: 480,
      minOrderQuantity: 24,
      minQuoteQuantity: 100,
      brand: 'Anker',
      imageUrl: url(0),
      galleryImageUrls: [url(1), url(2)],
      originalRetailPriceCents: 3_999,
      instantCheckout: true,
      promotePublicly: true,
    };
    expect(validateNewListing(SELLER, full)).toEqual({ ...full, sellerAccountId: SELLER });
  });

  it('trims texts and treats blank optional texts as not sent', () => {
    const valid = validateNewListing(SELLER, { ...draft, name: '  Chargers \n', sku: '  ', brand: '' });
    expect(valid).toMatchObject({ name: 'Chargers', sku: undefined, brand: undefined });
  });

  it('counts characters as code points', () => {
    expect(violationsOf({ name: '📦'.repeat(LISTING_LIMITS.nameMaxLength) })).toEqual([]);
  });

  it('allows a minimum quote quantity above the stock, since quotes may exceed it (docs/specification.md, "Service")', () => {
    expect(violationsOf({ quantity: 10, minQuoteQuantity: 50 })).toEqual([]);
  });

  it('accepts a gallery of exactly the maximum size and a minimum order equal to the stock', () => {
    const gallery = Array.from({ length: LISTING_LIMITS.galleryMaxItems }, (_, n) => url(n));
    expect(violationsOf({ galleryImageUrls: gallery, quantity: 5, minOrderQuantity: 5 })).toEqual([]);
  });

  const over = (max: number): string => 'x'.repeat(max + 1);
  const maxPrice = LISTING_LIMITS.maxPriceCents;
  const maxQuantity = LISTING_LIMITS.maxQuantity;

  it.each<[string, Partial<ListingDraft>, FieldViolation]>([
    ['name is required', { name: ' \t ' }, { path: 'name', message: 'is required' }],
    [
      'name is at most 500 characters',
      { name: over(500) },
      { path: 'name', message: 'must be at most 500 characters' },
    ],
    ['description is required', { description: '' }, { path: 'description', message: 'is required' }],
    [
      'description is at most 10000 characters',
      { description: over(10_000) },
      { path: 'description', message: 'must be at most 10000 characters' },
    ],
    [
      'sku is at most 255 characters',
      { sku: over(255) },
      { path: 'sku', message: 'must be at most 255 characters' },
    ],
    [
      'brand is at most 255 characters',
      { brand: over(255) },
      { path: 'brand', message: 'must be at most 255 characters' },
    ],
    [
      'category is one of the categories',
      { category: 'Electronics' },
      { path: 'category', message: `must be one of ${CATEGORIES.join(', ')}` },
    ],
    [
      'condition is one of the conditions',
      { condition: 'used' },
      {
        path: 'condition',
        message: 'must be one of salvage, customer_returns, shelf_pulls, overstock, new_or_refurbished',
      },
    ],
    ['price is positive', { priceCents: 0 }, { path: 'price', message: 'must be greater than 0' }],
    [
      'price is whole cents',
      { priceCents: 12.5 },
      { path: 'price', message: 'must be a whole number of cents' },
    ],
    [
      'price has a ceiling',
      { priceCents: maxPrice + 1 },
      { path: 'price', message: 'must be at most $10,000,000' },
    ],
    ['quantity is at least 1', { quantity: 0 }, { path: 'quantity', message: 'must be at least 1' }],
    ['quantity is whole', { quantity: 1.5 }, { path: 'quantity', message: 'must be a whole number' }],
    [
      'quantity has a ceiling',
      { quantity: maxQuantity + 1 },
      { path: 'quantity', message: `must be at most ${maxQuantity}` },
    ],
    [
      'minOrderQuantity is at least 1',
      { minOrderQuantity: 0 },
      { path: 'minOrderQuantity', message: 'must be at least 1' },
    ],
    [
      'minOrderQuantity does not exceed the quantity',
      { quantity: 10, minOrderQuantity: 11 },
      { path: 'minOrderQuantity', message: 'must not exceed quantity' },
    ],
    [
      'minOrderQuantity does not exceed the default quantity',
      { minOrderQuantity: 2 },
      { path: 'minOrderQuantity', message: 'must not exceed quantity' },
    ],
    [
      'minQuoteQuantity is at least 1',
      { minQuoteQuantity: 0 },
      { path: 'minQuoteQuantity', message: 'must be at least 1' },
    ],
    [
      'minQuoteQuantity is whole',
      { minQuoteQuantity: 2.5 },
      { path: 'minQuoteQuantity', message: 'must be a whole number' },
    ],
    [
      'imageUrl is absolute',
      { imageUrl: '/images/a.jpg' },
      { path: 'imageUrl', message: 'must be an absolute http or https URL' },
    ],
    [
      'imageUrl is http or https',
      { imageUrl: 'ftp://img.example.com/a.jpg' },
      { path: 'imageUrl', message: 'must be an absolute http or https URL' },
    ],
    [
      'imageUrl is at most 2000 characters',
      { imageUrl: `https://img.example.com/${over(2_000)}` },
      { path: 'imageUrl', message: 'must be at most 2000 characters' },
    ],
    [
      'each gallery item is an http(s) URL, reported at its index',
      { galleryImageUrls: [url(0), url(1), url(2), 'javascript:alert(1)'] },
      { path: 'galleryImageUrls/3', message: 'must be an absolute http or https URL' },
    ],
    [
      'the gallery has at most 8 items',
      { galleryImageUrls: Array.from({ length: 9 }, (_, n) => url(n)) },
      { path: 'galleryImageUrls', message: 'must have at most 8 items' },
    ],
    [
      'originalRetailPrice is positive',
      { originalRetailPriceCents: 0 },
      { path: 'originalRetailPrice', message: 'must be greater than 0' },
    ],
  ])('%s', (_rule, patch, violation) => {
    expect(violationsOf(patch)).toEqual([violation]);
  });

  it('requires a seller account', () => {
    expect(violationsOf({}, 0)).toEqual([{ path: 'sellerAccountId', message: 'must be an account id' }]);
  });

  it('reports every violation of a draft at once, and names each in the message', () => {
    const invalid: ListingDraft = {
      name: '',
      description: '',
      category: 'gadgets',
      priceCents: -1,
      quantity: 3,
      minOrderQuantity: 4,
      galleryImageUrls: [...Array.from({ length: 8 }, (_, n) => url(n)), 'not a url'],
    };
    expect(violationsOf(invalid).map(({ path }) => path)).toEqual([
      'name',
      'description',
      'category',
      'price',
      'galleryImageUrls/8',
      'galleryImageUrls',
      'minOrderQuantity',
    ]);
    expect(() => validateNewListing(SELLER, invalid)).toThrow(
      'invalid listing: name is required; description is required; category must be one of ',
    );
  });
});

describe('generated sku', () => {
  it('derives from the product number', () => {
    expect(generatedSku('product_42')).toBe('SKU-42');
  });

  it('refuses what is not a product id', () => {
    expect(() => generatedSku('listing-42')).toThrow('not a product id: listing-42');
  });
});

describe('bulk update rules', () => {
  it('computes percentages to whole cents, rounding half up', () => {
    expect(bulkChangesOf('price_percent_increase', 10, { priceCents: 999 })).toEqual({ priceCents: 1_099 });
    expect(bulkChangesOf('price_percent_decrease', 12.5, { priceCents: 1_000 })).toEqual({ priceCents: 875 });
    expect(bulkChangesOf('price_percent_decrease', 50, { priceCents: 1 })).toEqual({ priceCents: 1 });
    expect(bulkChangesOf('price_set', 4_200, { priceCents: 1 })).toEqual({ priceCents: 4_200 });
    expect(bulkChangesOf('moq_set', 5, { priceCents: 1 })).toEqual({ minOrderQuantity: 5 });
  });

  it('refuses values outside each mode', () => {
    for (const [mode, value] of [
      ['price_set', 0],
      ['price_set', 12.5],
      ['price_percent_increase', 1_001],
      ['price_percent_decrease', 100],
      ['moq_set', 1.5],
    ] as const) {
      expect(() => checkBulkValue(mode, value)).toThrow(/value/);
    }
    expect(() => checkBulkValue('price_percent_decrease', 99.5)).not.toThrow();
  });
});

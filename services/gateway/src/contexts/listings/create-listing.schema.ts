import { z } from 'zod';
import type { listingV1 } from '@marketplace/proto';
import { dollarsToCents, hasAtMostTwoDecimals } from '@marketplace/platform';
import { CATEGORIES, CONDITIONS, LISTING_LIMITS } from '@marketplace/vocabulary';
import { listingShippingBodySchema } from '../../edge/schemas/shipping.schema.js';
import { characterCount } from '../../edge/schemas/validate.js';

/**
 * The body of POST /api/products (docs/specification.md, "Listings"). The gateway checks types and the limits the specification states;
 * the listing service owns every other rule (positive prices, quantities, URLs, cross-field rules) and reports
 * its violations under the same field names. Unknown fields are rejected, so a misspelt `promotePublicly`
 * cannot silently create an in-app-only listing. `null` counts as not sent.
 */
export const text = (maxLength: number) =>
  z.string().refine((value) => characterCount(value) <= maxLength, `must be at most ${maxLength} characters`);

export const requiredText = (maxLength: number) =>
  text(maxLength).refine((value) => value.trim().length > 0, 'must not be empty');

const maxDollars = LISTING_LIMITS.maxPriceCents / 100;

/**
 * A dollar amount as the specification sends it; bounded on both sides so the conversion to cents stays exact
 * (an unbounded negative amount once overflowed the safe integers on its way to cents, and came back as a 500).
 */
export const dollars = z
  .number()
  .positive('must be greater than 0')
  .max(maxDollars, `must be at most ${maxDollars}`)
  .refine(hasAtMostTwoDecimals, 'must have at most 2 decimals');

export const createListingBodySchema = z.strictObject({
  name: requiredText(LISTING_LIMITS.nameMaxLength),
  description: requiredText(LISTING_LIMITS.descriptionMaxLength),
  sku: text(LISTING_LIMITS.skuMaxLength).nullish(),
  category: z.enum(CATEGORIES).nullish(),
  condition: z.enum(CONDITIONS).nullish(),
  price: dollars.nullish(),
  quantity: z.int().nullish(),
  minOrderQuantity: z.int().nullish(),
  minQuoteQuantity: z.int().nullish(),
  brand: text(LISTING_LIMITS.brandMaxLength).nullish(),
  imageUrl: z.string().nullish(),
  galleryImageUrls: z
    .array(z.string())
    .max(LISTING_LIMITS.galleryMaxItems, `must have at most ${LISTING_LIMITS.galleryMaxItems} items`)
    .nullish(),
  promotePublicly: z.boolean().nullish(),
  /** Extensions beyond docs/specification.md, "Listings", settable by the seller: the list price the discount is measured against. */
  originalRetailPrice: dollars.nullish(),
  instantCheckout: z.boolean().nullish(),
  shipping: listingShippingBodySchema
    .nullish()
    .describe('the freight terms, as PUT …/shipping takes them; absent: none set (no freight is charged)'),
});

export type CreateListingBody = z.output<typeof createListingBodySchema>;

export const centsOf = (dollars: number | null | undefined): number | undefined =>
  dollars == null ? undefined : dollarsToCents(dollars);

/** docs/specification.md, "Listings" field names to the listing service's draft; dollars become cents, `null` means not sent. */
export const listingDraftOf = (body: CreateListingBody): listingV1.ListingDraft => ({
  name: body.name,
  description: body.description,
  sku: body.sku ?? undefined,
  category: body.category ?? undefined,
  condition: body.condition ?? undefined,
  priceCents: centsOf(body.price),
  quantity: body.quantity ?? undefined,
  minOrderQuantity: body.minOrderQuantity ?? undefined,
  minQuoteQuantity: body.minQuoteQuantity ?? undefined,
  brand: body.brand ?? undefined,
  imageUrl: body.imageUrl ?? undefined,
  galleryImageUrls: body.galleryImageUrls ?? [],
  promotePublicly: body.promotePublicly ?? false,
  originalRetailPriceCents: centsOf(body.originalRetailPrice),
  instantCheckout: body.instantCheckout ?? false,
  shipping: body.shipping ?? undefined,
});

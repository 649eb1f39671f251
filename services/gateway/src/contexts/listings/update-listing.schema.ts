import { z } from 'zod';
import { CATEGORIES, CONDITIONS, LISTING_LIMITS } from '@marketplace/vocabulary';
import { productIdSchema as productIdTextSchema } from '../../edge/schemas/fields.schema.js';
import { dollars, requiredText, text } from './create-listing.schema.js';
import { listingShippingBodySchema } from '../../edge/schemas/shipping.schema.js';

/**
 * The body of PUT /api/products/{id}: what POST /api/products takes, with its field names and units (docs/specification.md, "Listings":
 * `price` in dollars; docs/specification.md, "Listings"). Fields sent replace the stored ones (`quantity` sets the stock as
 * PATCH …/quantity does, a new `imageUrl` or gallery is fetched and re-hosted); fields left out, or `null`, keep
 * their value; an empty body changes nothing but still confirms availability.
 */
export const updateListingBodySchema = z
  .strictObject({
    name: requiredText(LISTING_LIMITS.nameMaxLength).nullish(),
    description: requiredText(LISTING_LIMITS.descriptionMaxLength).nullish(),
    sku: text(LISTING_LIMITS.skuMaxLength).nullish(),
    category: z.enum(CATEGORIES).nullish(),
    condition: z.enum(CONDITIONS).nullish(),
    price: dollars.nullish().describe('unit price in dollars, up to 2 decimals'),
    minOrderQuantity: z.int().nullish(),
    minQuoteQuantity: z.int().nullish(),
    brand: text(LISTING_LIMITS.brandMaxLength).nullish(),
    originalRetailPrice: dollars.nullish().describe('list price in dollars the discount is measured against'),
    instantCheckout: z.boolean().nullish(),
    promotePublicly: z.boolean().nullish(),
    quantity: z
      .int()
      .min(0, 'must be at least 0')
      .max(LISTING_LIMITS.maxQuantity, `must be at most ${LISTING_LIMITS.maxQuantity}`)
      .nullish()
      .describe('units in stock, as PATCH …/quantity sets them; 0 marks the listing sold out'),
    imageUrl: z.string().nullish().describe('a new main image: fetched and re-hosted'),
    galleryImageUrls: z
      .array(z.string())
      .max(LISTING_LIMITS.galleryMaxItems, `must have at most ${LISTING_LIMITS.galleryMaxItems} items`)
      .nullish()
      .describe('replaces the whole gallery (re-hosted); [] empties it'),
    shipping: listingShippingBodySchema
      .nullish()
      .describe('new freight terms, as PUT …/shipping takes them; absent or null: kept'),
  })
  .describe('Changes to a listing: the fields sent change, the others keep their value');

export type UpdateListingBody = z.output<typeof updateListingBodySchema>;

/** The body of PATCH /api/products/{id}/quantity: the units now in stock; 0 marks the listing sold out. */
export const listingQuantityBodySchema = z
  .strictObject({
    quantity: z
      .int()
      .min(0, 'must be at least 0')
      .max(LISTING_LIMITS.maxQuantity, `must be at most ${LISTING_LIMITS.maxQuantity}`)
      .describe('units in stock; 0 marks the listing sold out'),
  })
  .describe('The stock of a listing');

/** docs/specification.md, "Limits": bulk tools take 1 to 200 ids per call. */
export const BULK_MAX_IDS = 200;

/** `product_12` or `12`, as the REST paths and the bulk_update_listings tool (integers) name products. */
const productIdSchema = z.union([productIdTextSchema, z.int().positive('must be a positive product number')]);

const productIdsSchema = z
  .array(productIdSchema)
  .min(1, 'must hold at least 1 product id')
  .max(BULK_MAX_IDS, `must hold at most ${BULK_MAX_IDS} product ids`)
  .describe('the listings to change: product_<n> or n; listings of other sellers are reported, not touched');

/** The modes of the bulk_update_listings tool that change prices (docs/specification.md, "MCP tools"). */
export const BULK_PRICE_MODES = ['price_set', 'price_percent_increase', 'price_percent_decrease'] as const;

/** The body of POST /api/products/bulk-update-price: the price modes of the bulk_update_listings tool. */
export const bulkUpdatePriceBodySchema = z
  .strictObject({
    productIds: productIdsSchema,
    mode: z.enum(BULK_PRICE_MODES),
    value: z
      .number()
      .describe(
        'price_set: the new unit price in cents; the percent modes: the percentage (0-1000, under 100)',
      ),
  })
  .describe('One price change applied to up to 200 of your listings');

/** The body of POST /api/products/bulk-update-moq: mode moq_set of the bulk_update_listings tool. */
export const bulkUpdateMoqBodySchema = z
  .strictObject({
    productIds: productIdsSchema,
    minOrderQuantity: z.int().describe('the new minimum order quantity, at least 1'),
  })
  .describe('One minimum order quantity applied to up to 200 of your listings');

export type BulkUpdatePriceBody = z.output<typeof bulkUpdatePriceBodySchema>;
export type BulkUpdateMoqBody = z.output<typeof bulkUpdateMoqBodySchema>;

import { z } from 'zod';
import type { FieldViolation } from '@marketplace/platform';
import { AppError } from '@marketplace/platform';
import {
  BULK_UPDATE_LIMITS,
  BULK_UPDATE_MODES,
  CATEGORIES,
  CONDITIONS,
  LISTING_LIMITS,
} from '@marketplace/vocabulary';
import { requireSeller } from '../../edge/account.js';
import { productIdSchema } from '../../edge/schemas/fields.schema.js';
import { idempotencyKeyArgument } from '../../edge/schemas/idempotency-key.schema.js';
import { shippingTermsInput, shippingTermsOf } from '../../edge/schemas/shipping.schema.js';
import {
  LISTING_STATUSES,
  LISTING_VISIBILITIES,
  SELLER_LISTINGS_DEFAULT_LIMIT,
  SELLER_LISTINGS_MAX_LIMIT,
  updatedSinceSchema,
} from './seller-listings.schema.js';
import type { BulkUpdateOutcome, ListingCommands, SellerListingsPage } from './listing.commands.js';
import type { CreatedListingView, SellerListing } from '../../edge/product.views.js';
import { productDetailsOutput } from '../../edge/product.views.js';
import type { Tool } from '../../edge/mcp/tool.js';
import type { BulkUpsertAnswer } from './bulk-upsert.js';
import { bulkUpsertBodySchema, bulkUpsertOutput } from './bulk-upsert.js';

const oneOf = (values: readonly string[]) => ({ error: `must be one of ${values.join(', ')}` });
const wholeNumber = (min: number, max: number, unit: string) =>
  z
    .number({ error: `must be a whole number of ${unit}` })
    .int(`must be a whole number of ${unit}`)
    .min(min, `must be at least ${min}`)
    .max(max, `must be at most ${max}`);
const cents = wholeNumber(1, LISTING_LIMITS.maxPriceCents, 'cents');
const text = (maxLength: number) =>
  z.string({ error: 'must be a string' }).max(maxLength, `must be at most ${maxLength} characters`);

/** create_listing (docs/specification.md, "MCP tools"): its own field names, prices in cents. */
export const createListingInput = z.object({
  name: text(LISTING_LIMITS.nameMaxLength).min(1, 'is required'),
  category: z.enum(CATEGORIES, oneOf(CATEGORIES)),
  condition: z.enum(CONDITIONS, oneOf(CONDITIONS)),
  quantity: wholeNumber(1, LISTING_LIMITS.maxQuantity, 'units'),
  price_per_unit: cents.describe('unit price in cents'),
  original_retail_price: cents
    .optional()
    .describe('list price per unit in cents, the discount is measured against it'),
  description: text(LISTING_LIMITS.descriptionMaxLength)
    .optional()
    .describe('defaults to the name: a listing always has a description'),
  sku: text(LISTING_LIMITS.skuMaxLength).optional(),
  image_url: text(LISTING_LIMITS.urlMaxLength)
    .optional()
    .describe('http(s) URL of the main image, fetched and re-hosted; without it a similar image is found'),
  gallery_image_urls: z
    .array(text(LISTING_LIMITS.urlMaxLength))
    .max(LISTING_LIMITS.galleryMaxItems, `must have at most ${LISTING_LIMITS.galleryMaxItems} items`)
    .optional()
    .describe('more image URLs, re-hosted'),
  promote_publicly: z
    .boolean({ error: 'must be true or false' })
    .optional()
    .describe('true: on the public catalog, feed and agent surfaces; default false (in-app only)'),
  shipping: shippingTermsInput
    .optional()
    .describe(
      'the freight terms, as set_listing_shipping takes them; absent: none set (no freight is charged)',
    ),
  idempotency_key: idempotencyKeyArgument,
});

/** update_listing: the fields of create_listing, each optional (sent: replaced), plus the version read. */
export const updateListingInput = z.object({
  product_id: productIdSchema,
  name: text(LISTING_LIMITS.nameMaxLength).min(1, 'must not be empty').optional(),
  description: text(LISTING_LIMITS.descriptionMaxLength).min(1, 'must not be empty').optional(),
  category: z.enum(CATEGORIES, oneOf(CATEGORIES)).optional(),
  condition: z.enum(CONDITIONS, oneOf(CONDITIONS)).optional(),
  quantity: wholeNumber(0, LISTING_LIMITS.maxQuantity, 'units')
    .optional()
    .describe('units in stock; 0 marks the listing sold out'),
  price_per_unit: cents.optional().describe('unit price in cents'),
  original_retail_price: cents.optional(),
  sku: text(LISTING_LIMITS.skuMaxLength).optional(),
  image_url: text(LISTING_LIMITS.urlMaxLength).optional().describe('a new main image, re-hosted'),
  gallery_image_urls: z
    .array(text(LISTING_LIMITS.urlMaxLength))
    .max(LISTING_LIMITS.galleryMaxItems, `must have at most ${LISTING_LIMITS.galleryMaxItems} items`)
    .optional()
    .describe('replaces the whole gallery'),
  promote_publicly: z.boolean({ error: 'must be true or false' }).optional(),
  shipping: shippingTermsInput
    .optional()
    .describe('new freight terms, as set_listing_shipping takes them; absent: kept'),
  expected_version: wholeNumber(1, Number.MAX_SAFE_INTEGER, 'a version')
    .optional()
    .describe(
      'the version you read (list_my_listings): if the listing moved on, nothing changes and you are told',
    ),
});

/** withdraw_listing: the listing to take off sale. */
export const withdrawListingInput = z.object({
  product_id: productIdSchema,
  expected_version: wholeNumber(1, Number.MAX_SAFE_INTEGER, 'a version').optional(),
});

/** set_listing_shipping: a lot's freight terms (docs/specification.md, "Checkout and orders": freight). */
export const setListingShippingInput = shippingTermsInput.extend({
  product_id: productIdSchema,
  expected_version: wholeNumber(1, Number.MAX_SAFE_INTEGER, 'a version')
    .optional()
    .describe('the version you read: if the listing moved on, nothing changes and you are told (If-Match)'),
});

/** bulk_update_listings (docs/specification.md, "MCP tools"): product numbers, one mode, one value. */
export const bulkUpdateListingsInput = z.object({
  product_ids: z
    .array(wholeNumber(1, Number.MAX_SAFE_INTEGER, 'a product number'))
    .min(1, 'must hold at least 1 product id')
    .max(BULK_UPDATE_LIMITS.maxItems, `must hold at most ${BULK_UPDATE_LIMITS.maxItems} product ids`)
    .describe('product numbers: 12 for product_12'),
  mode: z.enum(BULK_UPDATE_MODES, oneOf(BULK_UPDATE_MODES)),
  value: z
    .number({ error: 'must be a number' })
    .describe('price_set: cents per unit; price_percent_*: percent; moq_set: units'),
});

export const bulkUpdateListingsOutput = z.object({
  updated: z.array(productDetailsOutput),
  failures: z
    .array(
      z.object({
        product_id: z.string(),
        reason: z.enum(['not_found', 'invalid']),
        message: z.string(),
      }),
    )
    .describe('listings left untouched: not yours, not found, or the change would break a rule'),
});

/** A listing as its seller reads it back: the details plus status and version (the ETag). */
export const sellerListingOutput = productDetailsOutput.extend({
  status: z.enum(LISTING_STATUSES),
  version: z.number().int().describe('the listing version: the ETag of GET /api/products/{id}, for If-Match'),
  image_placeholder: z.boolean().describe('true while the image is the category’s neutral placeholder'),
});

/** A created listing: the details, and notices when something was chosen for the seller (a placeholder image). */
export const createdListingOutput = productDetailsOutput.extend({
  notices: z
    .array(z.string())
    .optional()
    .describe('present when the image is the category’s placeholder: no image sent, none similar found'),
});

export const sellerListingsPageOutput = z.object({
  listings: z.array(sellerListingOutput),
  total: z.number().int().describe('listings matching the filters, all pages'),
  next_cursor: z.string().nullable().describe('pass as cursor for the next page; null on the last page'),
});

/** list_my_listings: the filters of GET /api/products. */
export const listMyListingsInput = z.object({
  status: z.enum(LISTING_STATUSES, oneOf(LISTING_STATUSES)).optional(),
  visibility: z.enum(LISTING_VISIBILITIES, oneOf(LISTING_VISIBILITIES)).optional(),
  category: z.enum(CATEGORIES, oneOf(CATEGORIES)).optional(),
  sku: text(LISTING_LIMITS.skuMaxLength).optional().describe('exact sku'),
  updated_since: updatedSinceSchema.optional().describe('only listings changed at or after this time'),
  cursor: text(100).optional().describe('next_cursor of the previous page'),
  limit: wholeNumber(1, SELLER_LISTINGS_MAX_LIMIT, 'listings')
    .default(SELLER_LISTINGS_DEFAULT_LIMIT)
    .describe(`page size, default ${SELLER_LISTINGS_DEFAULT_LIMIT}`),
});

/** The listing service names fields as REST does (docs/specification.md, "Listings"); the tool's caller knows them by the tool's names. */
const TOOL_FIELD_NAMES: ReadonlyMap<string, string> = new Map([
  ['price', 'price_per_unit'],
  ['originalRetailPrice', 'original_retail_price'],
  ['imageUrl', 'image_url'],
  ['galleryImageUrls', 'gallery_image_urls'],
  ['promotePublicly', 'promote_publicly'],
  ['shipFromRegion', 'ship_from_region'],
]);

const inToolNames = (error: unknown): unknown => {
  if (!(error instanceof AppError) || error.kind !== 'validation') return error;
  // Every segment: the freight terms' fields sit under `shipping/` in create_listing and update_listing.
  const renamed = (path: string) =>
    path
      .split('/')
      .map((field) => TOOL_FIELD_NAMES.get(field) ?? field)
      .join('/');
  const violations: FieldViolation[] = error.violations.map(({ path, message }) => ({
    path: renamed(path),
    message,
  }));
  const message =
    violations.length === 0
      ? error.message
      : `invalid listing: ${violations.map((v) => `${v.path} ${v.message}`).join('; ')}`;
  return new AppError('validation', message, violations, { cause: error });
};

/** Typical arguments of create_listing; /openapi.json reuses them where a route takes the same fields. */
export const CREATE_LISTING_EXAMPLES = [
  {
    name: 'Pallet of 120 cordless drills, shelf pulls',
    category: 'tools',
    condition: 'shelf_pulls',
    quantity: 120,
    price_per_unit: 2450,
    original_retail_price: 8999,
    sku: 'DRL-120-SP',
    promote_publicly: true,
    shipping: { mode: 'flat_per_order', cents: 15000 },
    idempotency_key: 'erp-sku-DRL-120-SP',
  },
];

export const createListingTool = (
  listings: ListingCommands,
): Tool<typeof createListingInput, CreatedListingView> => ({
  name: 'create_listing',
  examples: CREATE_LISTING_EXAMPLES,
  description:
    'Publishes a lot for the calling seller (price_per_unit and original_retail_price in cents). image_url and ' +
    'gallery_image_urls are fetched and re-hosted; without image_url a similar listing’s image is used, or the ' +
    'category’s placeholder. promote_publicly true puts it on the public catalog and agent surfaces (default: ' +
    'in-app only). Send an idempotency_key to retry safely: a repeat answers the same listing.',
  inputSchema: createListingInput,
  outputSchema: createdListingOutput,
  auth: 'seller',
  annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: false, openWorldHint: false },
  handler: async (principal, input) => {
    const seller = requireSeller(principal, 'create a listing');
    try {
      return await listings.create(
        seller,
        {
          name: input.name,
          description: input.description ?? input.name,
          sku: input.sku,
          category: input.category,
          condition: input.condition,
          priceCents: input.price_per_unit,
          quantity: input.quantity,
          originalRetailPriceCents: input.original_retail_price,
          imageUrl: input.image_url,
          galleryImageUrls: input.gallery_image_urls ?? [],
          promotePublicly: input.promote_publicly ?? false,
          instantCheckout: false,
          shipping: input.shipping && shippingTermsOf(input.shipping),
        },
        '',
        input.idempotency_key,
      );
    } catch (error) {
      throw inToolNames(error);
    }
  },
});

export const bulkUpdateListingsTool = (
  listings: ListingCommands,
): Tool<typeof bulkUpdateListingsInput, BulkUpdateOutcome> => ({
  name: 'bulk_update_listings',
  examples: [{ product_ids: [12, 13], mode: 'price_percent_decrease', value: 10 }],
  description:
    "Applies one change to up to 200 of the calling seller's listings: set a price (cents), raise or lower " +
    'prices by a percentage, or set the minimum order quantity. Listings that are not yours, do not exist or ' +
    'would break a rule are reported in failures and left untouched.',
  inputSchema: bulkUpdateListingsInput,
  outputSchema: bulkUpdateListingsOutput,
  auth: 'seller',
  annotations: { readOnlyHint: false, destructiveHint: true, idempotentHint: false, openWorldHint: false },
  handler: async (principal, input) =>
    listings.bulkUpdate(
      requireSeller(principal, 'bulk update listings'),
      { productIds: input.product_ids, mode: input.mode, value: input.value },
      '',
    ),
});

export const listMyListingsTool = (
  listings: ListingCommands,
): Tool<typeof listMyListingsInput, SellerListingsPage> => ({
  name: 'list_my_listings',
  examples: [{ status: 'active', category: 'tools', limit: 100 }],
  description:
    "The calling seller's own listings (public and in-app only), filtered by status, visibility, category, " +
    'sku and updated_since; oldest change first, paged by cursor, with the total. A listing changed while ' +
    'you page moves to the end and shows again, so syncing with updated_since misses nothing.',
  inputSchema: listMyListingsInput,
  outputSchema: sellerListingsPageOutput,
  auth: 'seller',
  annotations: { readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: false },
  handler: async (principal, input) =>
    listings.listMine(requireSeller(principal, 'list its listings'), {
      status: input.status,
      visibility: input.visibility,
      category: input.category,
      sku: input.sku,
      updatedSinceMs: input.updated_since === undefined ? undefined : Date.parse(input.updated_since),
      cursor: input.cursor,
      limit: input.limit,
    }),
});

export const updateListingTool = (
  listings: ListingCommands,
): Tool<typeof updateListingInput, SellerListing> => ({
  name: 'update_listing',
  examples: [{ product_id: 'product_12', price_per_unit: 2200, quantity: 90, expected_version: 3 }],
  description:
    "Changes the calling seller's listing: the fields sent replace the stored ones (quantity sets the stock, 0 " +
    'is sold out; image_url is re-hosted), the others are kept. Counts as an availability confirmation. Send ' +
    'expected_version (from list_my_listings) to change it only if nobody else did since.',
  inputSchema: updateListingInput,
  outputSchema: sellerListingOutput,
  auth: 'seller',
  annotations: { readOnlyHint: false, destructiveHint: true, idempotentHint: true, openWorldHint: true },
  handler: async (principal, input) => {
    const seller = requireSeller(principal, 'update a listing');
    try {
      return await listings.update(
        seller,
        input.product_id,
        {
          name: input.name,
          description: input.description,
          sku: input.sku,
          category: input.category,
          condition: input.condition,
          priceCents: input.price_per_unit,
          originalRetailPriceCents: input.original_retail_price,
          quantity: input.quantity,
          imageUrl: input.image_url,
          galleryImageUrls: input.gallery_image_urls && { urls: input.gallery_image_urls },
          promotePublicly: input.promote_publicly,
          shipping: input.shipping && shippingTermsOf(input.shipping),
        },
        '',
        input.expected_version === undefined ? [] : [input.expected_version],
      );
    } catch (error) {
      throw inToolNames(error);
    }
  },
});

export const withdrawListingTool = (
  listings: ListingCommands,
): Tool<typeof withdrawListingInput, SellerListing> => ({
  name: 'withdraw_listing',
  examples: [{ product_id: 'product_12' }],
  description:
    "Takes the calling seller's listing off sale: off search, the feed and checkout; open quotes and orders " +
    'keep it. Nothing is deleted: relist it with POST /api/products/{id}/relist. Repeating it changes nothing.',
  inputSchema: withdrawListingInput,
  outputSchema: sellerListingOutput,
  auth: 'seller',
  annotations: { readOnlyHint: false, destructiveHint: true, idempotentHint: true, openWorldHint: false },
  handler: async (principal, input) =>
    listings.withdraw(
      requireSeller(principal, 'withdraw a listing'),
      input.product_id,
      '',
      input.expected_version === undefined ? [] : [input.expected_version],
    ),
});

/** Typical arguments of set_listing_shipping; /openapi.json reuses them where a route takes the same fields. */
export const SET_LISTING_SHIPPING_EXAMPLES = [
  { product_id: 'product_12', mode: 'flat_per_order', cents: 15000 },
  { product_id: 'product_12', mode: 'buyer_pickup', ship_from_region: 'Reno, NV' },
];

export const setListingShippingTool = (
  listings: ListingCommands,
): Tool<typeof setListingShippingInput, SellerListing> => ({
  name: 'set_listing_shipping',
  examples: SET_LISTING_SHIPPING_EXAMPLES,
  description:
    "Sets the freight terms of the calling seller's listing: included, flat_per_order (cents), per_unit " +
    '(cents), buyer_pickup (ship_from_region) or quoted_on_request (checkout escalates; buyers ask with ' +
    'request_quote and a destination). Checkouts show freight apart from goods; the same terms again change nothing. ' +
    'Send expected_version to change them only if nobody else changed the listing since. create_listing and ' +
    'update_listing take the same terms as shipping.',
  inputSchema: setListingShippingInput,
  outputSchema: sellerListingOutput,
  auth: 'seller',
  annotations: { readOnlyHint: false, destructiveHint: true, idempotentHint: true, openWorldHint: false },
  handler: async (principal, input) => {
    const seller = requireSeller(principal, 'set a listing’s shipping');
    try {
      return await listings.setShipping(
        seller,
        input.product_id,
        shippingTermsOf(input),
        '',
        input.expected_version === undefined ? [] : [input.expected_version],
      );
    } catch (error) {
      throw inToolNames(error);
    }
  },
});

/** bulk_upsert_listings: POST /api/products/bulk as a tool, items in the REST body's names. */
export const bulkUpsertListingsInput = bulkUpsertBodySchema.extend({
  items: bulkUpsertBodySchema.shape.items.describe(
    'each an object with the fields of POST /api/products: name, description, sku, category, condition, ' +
      'price (dollars), quantity, minOrderQuantity, brand, imageUrl, galleryImageUrls, promotePublicly; ' +
      'each item is checked on its own and a bad one is reported in its result',
  ),
  idempotency_key: idempotencyKeyArgument,
});

/** Typical arguments of bulk_upsert_listings; /openapi.json reuses them for POST /api/products/bulk. */
export const BULK_UPSERT_LISTINGS_EXAMPLES = [
  {
    mode: 'upsert_by_sku',
    items: [
      {
        name: 'Pallet of USB-C chargers',
        description: '480 units, boxed overstock',
        sku: 'CHG-480',
        category: 'electronics',
        condition: 'overstock',
        price: 4.25,
        quantity: 480,
        promotePublicly: true,
      },
    ],
  },
];

export const bulkUpsertListingsTool = (
  listings: ListingCommands,
): Tool<typeof bulkUpsertListingsInput, BulkUpsertAnswer> => ({
  name: 'bulk_upsert_listings',
  examples: BULK_UPSERT_LISTINGS_EXAMPLES,
  description:
    "Creates or updates up to 1,000 of the calling seller's listings in one call (an ERP or warehouse sync). " +
    'mode create makes a listing of every item; upsert_by_sku updates your listing with the item’s sku (the ' +
    'fields sent replace the stored ones) and creates one where none has it. Each item answers created, ' +
    'updated, unchanged (nothing written) or error with its fields; one bad item never fails the others.',
  inputSchema: bulkUpsertListingsInput,
  outputSchema: bulkUpsertOutput,
  itemsCheckedOneByOne: 'items',
  auth: 'seller',
  annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: false, openWorldHint: true },
  handler: async (principal, input) =>
    listings.bulkUpsert(
      requireSeller(principal, 'publish listings'),
      { mode: input.mode, items: input.items },
      '',
      input.idempotency_key,
    ),
});

/** The seller's listing tools, in the order tools/list shows them. */
export const listingTools = (listings: ListingCommands): Tool[] => [
  createListingTool(listings),
  bulkUpdateListingsTool(listings),
  bulkUpsertListingsTool(listings),
  listMyListingsTool(listings),
  updateListingTool(listings),
  withdrawListingTool(listings),
  setListingShippingTool(listings),
];

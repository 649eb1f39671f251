import { Router } from 'express';
import { z } from 'zod';
import { CATEGORY_NAMES, isCategory } from '@marketplace/vocabulary';
import type { CatalogQueries } from './catalog.queries.js';
import type { ProductDetails } from '../../edge/product.views.js';
import { sellerDisplayNameOf } from '../../edge/product.views.js';
import { methodNotAllowed } from '../../edge/http/method-not-allowed.js';
import type { Problems } from '../../edge/http/problem.js';
import { parseOrThrow } from '../../edge/schemas/validate.js';
import { LISTING_DOCUMENT_CACHE_CONTROL, markdownUrlOf } from './markdown.routes.js';
import type { RouteDoc } from '../../edge/discovery/openapi.describe.js';
import { RETURN_POLICY_PATH, RETURN_WINDOW_DAYS, TERMS_PATH } from '../../edge/discovery/policies.routes.js';

/** docs/specification.md, "Limits": a feed page holds up to 200 items. */
export const FEED_MAX_PAGE_SIZE = 200;
const FEED_DEFAULT_PAGE_SIZE = 100;
/** The OpenAI/ACP product feed revision whose field names the items use (id, link, image_link, ...). */
export const FEED_SPEC_VERSION = '2025-09-29';

/** Query of GET /acp/feed.json: `cursor` from the previous page's `next_cursor`, `limit` 1-200 (default 100). */
export const feedQuerySchema = z.object({
  cursor: z
    .string({ error: 'must be given once' })
    .min(1, 'must not be empty')
    .max(200, 'must be at most 200 characters')
    .optional()
    .describe("the previous page's next_cursor; absent for the first page"),
  limit: z
    .string({ error: 'must be given once' })
    .regex(/^[0-9]{1,3}$/, 'must be a whole number')
    .transform(Number)
    .pipe(
      z
        .number()
        .min(1, 'must be at least 1')
        .max(FEED_MAX_PAGE_SIZE, `must be at most ${FEED_MAX_PAGE_SIZE}`),
    )
    .optional()
    .describe(`items per page, 1-${FEED_MAX_PAGE_SIZE}, default ${FEED_DEFAULT_PAGE_SIZE}`),
});

/** Our conditions in the feed's three words; the marketplace's own word travels in `marketplace_condition`. */
const FEED_CONDITION: Record<string, 'new' | 'refurbished' | 'used'> = {
  overstock: 'new',
  shelf_pulls: 'new',
  new_or_refurbished: 'refurbished',
  customer_returns: 'used',
  salvage: 'used',
};

const feedPrice = (cents: number, currency: string): string => `${(cents / 100).toFixed(2)} ${currency}`;

/** Freight apart from the price (docs/specification.md, "Checkout and orders": freight); absent until set. */
const feedFreightOf = (product: ProductDetails) => {
  const { shipping } = product;
  if (shipping === null) return {};
  const price = (cents: number | undefined) =>
    cents === undefined ? undefined : feedPrice(cents, product.pricing.currency);
  return {
    freight: {
      mode: shipping.mode,
      ...(shipping.mode === 'flat_per_order' ? { price_per_order: price(shipping.cents) } : {}),
      ...(shipping.mode === 'per_unit' ? { price_per_unit: price(shipping.cents) } : {}),
      ...(shipping.ship_from_region === undefined ? {} : { ship_from_region: shipping.ship_from_region }),
    },
  };
};

/** A public listing as an item of the ACP (OpenAI) product feed, with the 2025 field names. */
export const feedItemOf = (product: ProductDetails, publicBaseUrl: string) => {
  const [image, ...moreImages] = product.images.map(({ url }) => url);
  const seller = product.seller;
  return {
    id: product.id,
    title: product.title,
    description: product.description,
    link: product.url,
    // Checkout runs through our own API (/api/ucp/checkout, quick_buy), not ACP's checkout sessions.
    enable_search: true,
    enable_checkout: false,
    ...(image === undefined ? {} : { image_link: image }),
    ...(moreImages.length === 0 ? {} : { additional_image_link: moreImages }),
    ...(product.condition === null ? {} : { condition: FEED_CONDITION[product.condition] ?? 'used' }),
    marketplace_condition: product.condition,
    product_category: isCategory(product.category) ? CATEGORY_NAMES[product.category] : product.category,
    ...(product.brand === null ? {} : { brand: product.brand }),
    mpn: product.sku,
    price: feedPrice(product.pricing.unit_price, product.pricing.currency),
    ...(product.pricing.original_retail_price === null
      ? {}
      : {
          original_retail_price: feedPrice(product.pricing.original_retail_price, product.pricing.currency),
        }),
    ...feedFreightOf(product),
    availability: product.availability,
    inventory_quantity: product.quantity_available,
    min_order_quantity: product.pricing.min_order_quantity,
    seller_name: sellerDisplayNameOf(seller).slice(0, 70),
    seller_url: publicBaseUrl,
    // Every seller sells under the marketplace's terms; seller_privacy_policy joins them if enable_checkout does.
    seller_tos: `${publicBaseUrl}${TERMS_PATH}`,
    return_policy: `${publicBaseUrl}${RETURN_POLICY_PATH}`,
    return_window: RETURN_WINDOW_DAYS,
    markdown_link: markdownUrlOf(publicBaseUrl, product.id),
    updated_at: product.updated_at,
  };
};

/**
 * GET /acp/feed.json: every public listing (docs/specification.md, "Service"), in product-number order so a crawl that pages through
 * while listings are added neither skips nor repeats one; `next_cursor` null on the last page.
 */
export const feedRoutes = (problems: Problems, catalog: CatalogQueries, publicBaseUrl: string): Router => {
  const router = Router();
  router
    .route('/acp/feed.json')
    .get(async (req, res) => {
      const query = parseOrThrow(feedQuerySchema, req.query, 'query parameters');
      const limit = query.limit ?? FEED_DEFAULT_PAGE_SIZE;
      const page = await catalog.publicProducts(query.cursor, limit);
      const nextUrl =
        page.next_cursor === null
          ? null
          : `${publicBaseUrl}/acp/feed.json?${new URLSearchParams({ cursor: page.next_cursor, limit: String(limit) }).toString()}`;
      if (nextUrl !== null) res.set('Link', `<${nextUrl}>; rel="next"`);
      res.set('Cache-Control', LISTING_DOCUMENT_CACHE_CONTROL).json({
        feed_spec_version: FEED_SPEC_VERSION,
        items: page.products.map((product) => feedItemOf(product, publicBaseUrl)),
        next_cursor: page.next_cursor,
        next: nextUrl,
      });
    })
    .all(methodNotAllowed(problems, ['GET']));
  return router;
};

const feedItemSchema = z.looseObject({
  id: z.string(),
  title: z.string(),
  description: z.string(),
  link: z.string(),
  enable_search: z.boolean(),
  enable_checkout: z.boolean(),
  image_link: z.string().optional(),
  condition: z.enum(['new', 'refurbished', 'used']).optional(),
  product_category: z.string(),
  price: z.string().describe('"12.50 USD"'),
  freight: z
    .object({
      mode: z.string().describe('included, flat_per_order, per_unit, buyer_pickup or quoted_on_request'),
      price_per_order: z.string().optional().describe('flat_per_order: "150.00 USD"'),
      price_per_unit: z.string().optional().describe('per_unit: "2.50 USD"'),
      ship_from_region: z.string().optional().describe('buyer_pickup: where the buyer collects the lot'),
    })
    .optional()
    .describe('the freight terms, apart from price; absent until the seller sets them'),
  availability: z.enum(['in_stock', 'out_of_stock']),
  inventory_quantity: z.number().int(),
  seller_name: z.string(),
  seller_url: z.string(),
  seller_tos: z.string(),
  return_policy: z.string(),
  return_window: z.number().int().describe('days'),
  markdown_link: z.string(),
  updated_at: z.string(),
});

export const feedRouteDocs: readonly RouteDoc[] = [
  {
    method: 'get',
    path: '/acp/feed.json',
    operationId: 'getProductFeed',
    summary: 'The ACP product feed of public listings, by cursor',
    tags: ['discovery'],
    auth: 'none',
    query: feedQuerySchema,
    responses: {
      200: {
        description: 'One page; Link rel="next" names the next one',
        schema: z.object({
          feed_spec_version: z.string(),
          items: z.array(feedItemSchema),
          next_cursor: z.string().nullable(),
          next: z.string().nullable(),
        }),
      },
      400: 'Invalid limit or cursor',
    },
  },
];

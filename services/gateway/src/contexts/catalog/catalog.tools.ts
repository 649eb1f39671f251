import { z } from 'zod';
import { CATALOG_SEARCH_LIMITS, CATEGORIES, CONDITIONS, LISTING_LIMITS } from '@marketplace/vocabulary';
import { requireSeller } from '../../edge/account.js';
import type { CatalogQueries, PricingRecommendation, ProductPage } from './catalog.queries.js';
import type { ProductDetails } from '../../edge/product.views.js';
import { productDetailsOutput, productSummaryOutput } from '../../edge/product.views.js';
import { productIdSchema } from '../../edge/schemas/fields.schema.js';
import type { Tool } from '../../edge/mcp/tool.js';

/** The catalog's text limit (see @marketplace/search): longer queries are refused, not truncated. */
const MAX_QUERY_CHARACTERS = 1_000;

const category = z.enum(CATEGORIES, { error: `must be one of ${CATEGORIES.join(', ')}` });
const condition = z.enum(CONDITIONS, { error: `must be one of ${CONDITIONS.join(', ')}` });
const cents = (min: number) =>
  z
    .number({ error: 'must be a whole number of cents' })
    .int('must be a whole number of cents')
    .min(min, `must be at least ${min}`)
    .max(LISTING_LIMITS.maxPriceCents, `must be at most ${LISTING_LIMITS.maxPriceCents}`);

/** search_inventory (docs/specification.md, "MCP tools"): every parameter optional; prices in cents, discount in whole percent. */
export const searchInventoryInput = z.object({
  query: z
    .string()
    .max(MAX_QUERY_CHARACTERS, `must be at most ${MAX_QUERY_CHARACTERS} characters`)
    .optional(),
  category: category.optional(),
  condition: condition.optional(),
  min_discount: z
    .number({ error: 'must be a whole percent' })
    .int('must be a whole percent')
    .min(0, 'must be at least 0')
    .max(100, 'must be at most 100')
    .optional(),
  max_price: cents(0).optional(),
  limit: z
    .number({ error: 'must be a whole number' })
    .int('must be a whole number')
    .min(1, 'must be at least 1')
    .max(CATALOG_SEARCH_LIMITS.maxLimit, `must be at most ${CATALOG_SEARCH_LIMITS.maxLimit}`)
    .default(CATALOG_SEARCH_LIMITS.defaultLimit),
});

/** get_product_details (docs/specification.md, "MCP tools"). */
export const getProductDetailsInput = z.object({
  product_id: productIdSchema,
});

/** get_pricing_recommendation (docs/specification.md, "MCP tools"), a seller tool. */
export const getPricingRecommendationInput = z.object({
  category,
  condition,
  original_retail: cents(1),
  quantity: z
    .number({ error: 'must be a whole number' })
    .int('must be a whole number')
    .min(1, 'must be at least 1')
    .max(LISTING_LIMITS.maxQuantity, `must be at most ${LISTING_LIMITS.maxQuantity}`)
    .optional(),
});

export const productPageOutput = z.object({
  products: z.array(productSummaryOutput),
  pagination: z.object({
    total: z.number().int(),
    limit: z.number().int(),
    offset: z.number().int(),
    has_more: z.boolean(),
  }),
});

export const pricingRecommendationOutput = z.object({
  recommended_unit_price: z.number().int(),
  low_unit_price: z.number().int(),
  high_unit_price: z.number().int(),
  currency: z.string(),
  basis: z.object({
    condition_recovery_rate: z.number(),
    comparable_listings: z.number().int(),
    comparable_median_ratio: z.number().nullable(),
    applied_ratio: z.number(),
    lot_size_factor: z.number(),
    explanation: z.string(),
  }),
});

/** Typical arguments of search_inventory; /openapi.json reuses them where a route takes the same fields. */
export const SEARCH_INVENTORY_EXAMPLES = [
  { query: 'cordless drill', category: 'tools', condition: 'overstock', max_price: 5000, limit: 20 },
];

export const searchInventoryTool = (
  catalog: CatalogQueries,
): Tool<typeof searchInventoryInput, ProductPage> => ({
  name: 'search_inventory',
  examples: SEARCH_INVENTORY_EXAMPLES,
  description:
    'Search public liquidation lots by words (all must match), category, condition, minimum discount off ' +
    'retail (whole percent) and maximum unit price (cents); best match first, newest first without a query.',
  inputSchema: searchInventoryInput,
  outputSchema: productPageOutput,
  auth: 'none',
  annotations: { readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: false },
  handler: (_principal, input) =>
    catalog.search({
      query: input.query,
      category: input.category,
      condition: input.condition,
      minDiscountPercent: input.min_discount,
      maxPriceCents: input.max_price,
      limit: input.limit,
      offset: 0,
    }),
});

export const getProductDetailsTool = (
  catalog: CatalogQueries,
): Tool<typeof getProductDetailsInput, ProductDetails> => ({
  name: 'get_product_details',
  examples: [{ product_id: 'product_12' }],
  description:
    'Everything needed to decide on one lot: pricing (unit price, original retail, discount, order and quote ' +
    'minimums, instant checkout, bulk threshold), condition, category, brand, sku, images, seller, availability.',
  inputSchema: getProductDetailsInput,
  outputSchema: productDetailsOutput,
  auth: 'none',
  annotations: { readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: false },
  // A seller also sees its own listings that were not promoted, exactly as over REST.
  handler: (principal, input) => catalog.details(input.product_id, principal),
});

export const getPricingRecommendationTool = (
  catalog: CatalogQueries,
): Tool<typeof getPricingRecommendationInput, PricingRecommendation> => ({
  name: 'get_pricing_recommendation',
  examples: [
    { category: 'electronics', condition: 'customer_returns', original_retail: 19999, quantity: 250 },
  ],
  description:
    'A recommended unit price (cents) with a low-high range for a lot, from recovery rates by condition, ' +
    'comparable public listings of the same category and condition, and the lot size; the basis explains it.',
  inputSchema: getPricingRecommendationInput,
  outputSchema: pricingRecommendationOutput,
  auth: 'seller',
  annotations: { readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: false },
  handler: async (principal, input) => {
    requireSeller(principal, 'ask for a pricing recommendation');
    return catalog.pricingRecommendation({
      category: input.category,
      condition: input.condition,
      originalRetailCents: input.original_retail,
      quantity: input.quantity,
    });
  },
});

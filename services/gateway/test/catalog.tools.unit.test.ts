import { describe, expect, it } from '@jest/globals';
import type { catalogV1 } from '@marketplace/proto';
import { CatalogQueries } from '../src/contexts/catalog/catalog.queries.js';
import { ProductViews } from '../src/edge/product.views.js';
import { searchInventorySemanticTool } from '../src/contexts/catalog/catalog-semantic.tools.js';
import {
  getPricingRecommendationTool,
  getProductDetailsTool,
  searchInventoryTool,
} from '../src/contexts/catalog/catalog.tools.js';
import type { CatalogClient } from '../src/contexts/catalog/catalog.client.js';
import type { Principal } from '../src/edge/account.js';

const product = (id: string): catalogV1.Product => ({
  id,
  title: 'Pallet of earbuds',
  description: 'Customer returns',
  priceCents: 1_000,
  currency: 'USD',
  availability: 'in_stock',
  version: 1,
  quantityAvailable: 200,
  imageUrls: [],
  category: 'electronics',
  condition: 'customer_returns',
  brand: '',
  sku: 'SKU-1',
  originalRetailPriceCents: 4_000,
  minOrderQuantity: 1,
  minQuoteQuantity: 1,
  instantCheckout: false,
  promotePublicly: true,
  shipping: undefined,
  sellerAccountId: 3,
  createdAtMs: 0,
  updatedAtMs: 0,
  discountPercent: 75,
});

/** A catalog that records what the tools ask for. */
const recordingCatalog = () => {
  const calls: unknown[] = [];
  const client: CatalogClient = {
    searchProducts: async (request) => {
      calls.push(request);
      return { products: [product('product_1')], total: 30 };
    },
    getProduct: async (request) => {
      calls.push(request);
      return product(request.productId);
    },
    listCategories: async () => [],
    semanticSearch: async (request) => {
      calls.push(request);
      return [{ product: product('product_2'), similarity: 0.734_56 }];
    },
    listPublicProducts: async (request) => {
      calls.push(request);
      return { products: [product('product_1')], nextCursor: '' };
    },
    getCatalogStats: async () => ({
      publicProducts: 0,
      publicInStockProducts: 0,
      byCategory: [],
      byCondition: [],
    }),
    recommendPrice: async (request) => {
      calls.push(request);
      return {
        recommendedUnitPriceCents: 500,
        lowUnitPriceCents: 400,
        highUnitPriceCents: 600,
        basis: {
          conditionRecoveryRate: 0.5,
          comparableListings: 2,
          appliedRatio: 0.5,
          lotSizeFactor: 1,
          explanation: 'table',
        },
      };
    },
    awaitProductVersion: async () => true,
    close: () => undefined,
  };
  return { calls, queries: new CatalogQueries(client, new ProductViews('https://market.test')) };
};

const seller: Principal = {
  accountId: 3,
  role: 'seller',
  credential: { kind: 'api_key', keyPrefix: 'lmk_abc' },
};
const buyer: Principal = {
  accountId: 4,
  role: 'buyer',
  credential: { kind: 'api_key', keyPrefix: 'lmk_def' },
};

const pathsOf = (result: { success: boolean; error?: { issues: { path: PropertyKey[] }[] } }) =>
  result.error?.issues.map(({ path }) => path.join('/'));

describe('search_inventory', () => {
  const { calls, queries } = recordingCatalog();
  const tool = searchInventoryTool(queries);

  it('accepts the parameters of docs/specification.md, "MCP tools", limit 20 by default', () => {
    expect(tool.inputSchema.parse({})).toEqual({ limit: 20 });
    expect(
      tool.inputSchema.parse({
        query: 'earbuds',
        category: 'electronics',
        condition: 'salvage',
        min_discount: 0,
      }),
    ).toMatchObject({ min_discount: 0 });
  });

  it('rejects each out-of-range parameter by name', () => {
    const result = tool.inputSchema.safeParse({
      query: 'x'.repeat(1_001),
      category: 'boats',
      condition: 'used',
      min_discount: 101,
      max_price: 1.5,
      limit: 101,
    });
    expect(pathsOf(result)).toEqual(['query', 'category', 'condition', 'min_discount', 'max_price', 'limit']);
    expect(pathsOf(tool.inputSchema.safeParse({ limit: 0, min_discount: -1 }))).toEqual([
      'min_discount',
      'limit',
    ]);
  });

  it('searches the catalog with the discount and price in its units, answering the page and its total', async () => {
    const page = await tool.handler(
      undefined,
      tool.inputSchema.parse({ query: 'earbuds', min_discount: 50, max_price: 2_000, limit: 1 }),
    );

    expect(calls.at(-1)).toEqual({
      query: 'earbuds',
      category: undefined,
      condition: undefined,
      minPriceCents: undefined,
      maxPriceCents: 2_000,
      minDiscountPercent: 50,
      limit: 1,
      offset: 0,
    });
    expect(page.pagination).toEqual({ total: 30, limit: 1, offset: 0, has_more: true });
    expect(page.products[0]?.id).toBe('product_1');
  });
});

describe('get_product_details', () => {
  const { calls, queries } = recordingCatalog();
  const tool = getProductDetailsTool(queries);

  it('requires a well-formed product id', () => {
    expect(pathsOf(tool.inputSchema.safeParse({}))).toEqual(['product_id']);
    expect(pathsOf(tool.inputSchema.safeParse({ product_id: 'product_0' }))).toEqual(['product_id']);
    expect(tool.inputSchema.parse({ product_id: 'product_12' })).toEqual({ product_id: 'product_12' });
  });

  it('answers the details, letting a seller see its own hidden listings', async () => {
    const details = await tool.handler(seller, { product_id: 'product_12' });

    expect(calls.at(-1)).toEqual({ productId: 'product_12', viewerAccountId: 3 });
    expect(details.pricing).toMatchObject({ unit_price: 1_000, discount_percent: 75 });
    await tool.handler(buyer, { product_id: 'product_12' });
    expect(calls.at(-1)).toEqual({ productId: 'product_12', viewerAccountId: undefined });
  });
});

describe('get_pricing_recommendation', () => {
  const { calls, queries } = recordingCatalog();
  const tool = getPricingRecommendationTool(queries);
  const input = { category: 'tools', condition: 'overstock', original_retail: 1_000 } as const;

  it('requires category, condition and original retail; quantity is optional', () => {
    expect(pathsOf(tool.inputSchema.safeParse({}))).toEqual(['category', 'condition', 'original_retail']);
    expect(pathsOf(tool.inputSchema.safeParse({ ...input, original_retail: 0, quantity: 0 }))).toEqual([
      'original_retail',
      'quantity',
    ]);
  });

  it('is for sellers only', async () => {
    await expect(tool.handler(undefined, input)).rejects.toMatchObject({ kind: 'unauthenticated' });
    await expect(tool.handler(buyer, input)).rejects.toMatchObject({ kind: 'forbidden' });
    expect(calls).toEqual([]);
  });

  it('answers the recommendation in cents with its range and basis', async () => {
    const recommendation = await tool.handler(seller, { ...input, quantity: 40 });

    expect(calls).toEqual([
      { category: 'tools', condition: 'overstock', originalRetailCents: 1_000, quantity: 40 },
    ]);
    expect(recommendation).toEqual({
      recommended_unit_price: 500,
      low_unit_price: 400,
      high_unit_price: 600,
      currency: 'USD',
      basis: {
        condition_recovery_rate: 0.5,
        comparable_listings: 2,
        comparable_median_ratio: null,
        applied_ratio: 0.5,
        lot_size_factor: 1,
        explanation: 'table',
      },
    });
  });
});

describe('search_inventory_semantic', () => {
  const { calls, queries } = recordingCatalog();
  const tool = searchInventorySemanticTool(queries);

  it('requires a query; limit 10 by default, at most 50; price in cents', () => {
    expect(tool.inputSchema.parse({ query: 'laptops for a school' })).toEqual({
      query: 'laptops for a school',
      limit: 10,
    });
    const result = tool.inputSchema.safeParse({
      query: ' ',
      limit: 51,
      max_price: 12.5,
      condition: 'used',
    });
    expect(pathsOf(result)?.sort()).toEqual(['condition', 'limit', 'max_price', 'query']);
    expect(pathsOf(tool.inputSchema.safeParse({}))).toEqual(['query']);
    expect(pathsOf(tool.inputSchema.safeParse({ query: 'x'.repeat(1_001) }))).toEqual(['query']);
  });

  it('answers the search_inventory product shape plus a similarity, rounded to 4 decimals', async () => {
    const input = tool.inputSchema.parse({ query: 'laptops', category: 'electronics', max_price: 5_000 });
    const result = await tool.handler(undefined, input);

    expect(calls.at(-1)).toEqual({
      query: 'laptops',
      category: 'electronics',
      condition: undefined,
      maxPriceCents: 5_000,
      limit: 10,
    });
    expect(result.products).toEqual([
      expect.objectContaining({ id: 'product_2', price: 1_000, similarity: 0.7346 }),
    ]);
    expect(tool.outputSchema.parse(result)).toEqual(result);
    expect(tool.auth).toBe('none');
    expect(tool.annotations.readOnlyHint).toBe(true);
  });
});

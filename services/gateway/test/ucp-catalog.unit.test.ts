import { describe, expect, it } from '@jest/globals';
import type { catalogV1 } from '@marketplace/proto';
import { ProductViews } from '../src/edge/product.views.js';
import {
  catalogSearchOfUcp,
  cursorOf,
  lookupIdsOf,
  ucpGetProductRequestSchema,
  ucpGetProductResponseOf,
  ucpLookupRequestSchema,
  ucpLookupResponseOf,
  ucpProductOf,
  ucpSearchRequestSchema,
  ucpSearchResponseOf,
} from '../src/contexts/catalog/ucp-catalog.js';
import { ucpCheckoutView } from '../src/contexts/orders/ucp-checkout.js';
import type { CheckoutSessionView } from '../src/contexts/orders/checkout.schema.js';
import type { OrderView } from '../src/contexts/orders/order.schema.js';

const BASE = 'https://market.test';
const views = new ProductViews(BASE);
const CREATED = Date.UTC(2026, 0, 2, 3, 4, 5);

const catalogProduct = (overrides: Partial<catalogV1.Product> = {}): catalogV1.Product => ({
  id: 'product_7',
  title: 'Pallet of earbuds',
  description: 'Customer returns, tested',
  priceCents: 1250,
  currency: 'USD',
  availability: 'in_stock',
  version: 1,
  quantityAvailable: 200,
  imageUrls: ['/images/abc.jpg'],
  category: 'electronics',
  condition: 'customer_returns',
  brand: 'Vantrell',
  sku: 'SKU-7',
  originalRetailPriceCents: 4000,
  minOrderQuantity: 10,
  minQuoteQuantity: 50,
  instantCheckout: true,
  promotePublicly: true,
  shipping: { mode: 'flat_per_order', cents: 7500 },
  sellerAccountId: 3,
  createdAtMs: CREATED,
  updatedAtMs: CREATED + 1000,
  seller: { name: 'Dana Whitfield', company: 'Acme Surplus', country: 'US' },
  ...overrides,
});
const details = (overrides: Partial<catalogV1.Product> = {}) => views.detailsOf(catalogProduct(overrides));

/** The `errors[].path`s a refused request names, as the problem document lists them. */
const refusedPaths = (
  schema: { safeParse(input: unknown): { success: boolean; error?: unknown } },
  input: unknown,
) => {
  const result = schema.safeParse(input);
  expect(result.success).toBe(false);
  return (result.error as { issues: { path: PropertyKey[] }[] }).issues.map((issue) => issue.path.join('.'));
};

describe('UCP catalog search request (docs/protocols.md §2.4)', () => {
  it('translates query, filters and pagination into the catalog search, UCP page size 10 by default', () => {
    const request = ucpSearchRequestSchema.parse({
      query: '  earbuds  ',
      filters: { categories: ['electronics'], price: { min: 100, max: 5000 }, condition: 'customer_returns' },
      context: { address_country: 'US', intent: 'restock' },
      signals: { anything: true },
    });
    expect(catalogSearchOfUcp(request)).toEqual({
      query: 'earbuds',
      category: 'electronics',
      condition: 'customer_returns',
      minPriceCents: 100,
      maxPriceCents: 5000,
      limit: 10,
      offset: 0,
    });
  });

  it('reads back the cursor it answered as the next offset', () => {
    const request = ucpSearchRequestSchema.parse({
      query: 'earbuds',
      pagination: { cursor: cursorOf(40), limit: 20 },
    });
    expect(catalogSearchOfUcp(request)).toMatchObject({ limit: 20, offset: 40 });
  });

  it('refuses, naming the field: no query nor filter, a forged cursor, two categories, an unknown filter, a bad price', () => {
    expect(refusedPaths(ucpSearchRequestSchema, {})).toEqual(['query']);
    expect(refusedPaths(ucpSearchRequestSchema, { query: '   ' })).toEqual(['query']);
    expect(refusedPaths(ucpSearchRequestSchema, { query: 'x', pagination: { cursor: 'b2Zmc2V0' } })).toEqual([
      'pagination.cursor',
    ]);
    expect(
      refusedPaths(ucpSearchRequestSchema, { query: 'x', pagination: { cursor: cursorOf(2_147_483_648) } }),
    ).toEqual(['pagination.cursor']);
    expect(refusedPaths(ucpSearchRequestSchema, { query: 'x', pagination: { limit: 101 } })).toEqual([
      'pagination.limit',
    ]);
    expect(
      refusedPaths(ucpSearchRequestSchema, { filters: { categories: ['electronics', 'tools'] } }),
    ).toEqual(['filters.categories']);
    expect(refusedPaths(ucpSearchRequestSchema, { filters: { categories: ['gadgets'] } })).toEqual([
      'filters.categories.0',
    ]);
    expect(refusedPaths(ucpSearchRequestSchema, { query: 'x', filters: { brand: 'Acme' } })).toEqual([
      'filters',
    ]);
    expect(refusedPaths(ucpSearchRequestSchema, { filters: { price: { min: 500, max: 100 } } })).toEqual([
      'filters.price.min',
    ]);
    expect(refusedPaths(ucpSearchRequestSchema, { query: 'x'.repeat(1_001) })).toEqual(['query']);
    expect(refusedPaths(ucpSearchRequestSchema, [])).toEqual(['']);
  });
});

describe('UCP products (docs/protocols.md §2.4, "Product" and "Variant")', () => {
  it('renders a lot as a product with one variant whose id is the product id, prices in cents', () => {
    expect(ucpProductOf(details(), BASE)).toEqual({
      id: 'product_7',
      title: 'Pallet of earbuds',
      description: { plain: 'Customer returns, tested' },
      url: `${BASE}/agents/products/product_7.md`,
      categories: [{ value: 'electronics', taxonomy: 'merchant' }],
      price_range: { min: { amount: 1250, currency: 'USD' }, max: { amount: 1250, currency: 'USD' } },
      list_price_range: { min: { amount: 4000, currency: 'USD' }, max: { amount: 4000, currency: 'USD' } },
      media: [{ type: 'image', url: `${BASE}/images/abc.jpg`, alt_text: 'Pallet of earbuds' }],
      variants: [
        {
          id: 'product_7',
          sku: 'SKU-7',
          title: 'Pallet of earbuds',
          description: { plain: 'Customer returns, tested' },
          url: `${BASE}/agents/products/product_7.md`,
          price: { amount: 1250, currency: 'USD' },
          list_price: { amount: 4000, currency: 'USD' },
          availability: { available: true, status: 'in_stock' },
          seller: {
            name: 'Acme Surplus',
            links: [
              { type: 'terms_of_service', url: `${BASE}/agents/terms.md`, title: 'Terms of sale' },
              { type: 'refund_policy', url: `${BASE}/agents/returns.md`, title: 'Return policy' },
            ],
          },
          metadata: {
            quantity_available: 200,
            min_order_quantity: 10,
            min_quote_quantity: 50,
            instant_checkout: true,
            bulk_threshold: { more_than_units: expect.any(Number), more_than_subtotal: expect.any(Number) },
          },
        },
      ],
      tags: ['customer_returns'],
      metadata: {
        condition: 'customer_returns',
        brand: 'Vantrell',
        shipping: { mode: 'flat_per_order', cents: 7500 },
        details_url: `${BASE}/api/ucp/catalog/products/product_7`,
      },
    });
  });

  it('gives no list price at or below the selling price, and an empty lot is out of stock', () => {
    const product = ucpProductOf(
      details({ originalRetailPriceCents: 1250, quantityAvailable: 0, sku: '', condition: '' }),
      BASE,
    );
    expect(product).not.toHaveProperty('list_price_range');
    expect(product).not.toHaveProperty('tags');
    expect(product.variants[0]).not.toHaveProperty('list_price');
    expect(product.variants[0]).not.toHaveProperty('sku');
    expect(product.variants[0]!.availability).toEqual({ available: false, status: 'out_of_stock' });
  });

  it('pages with a cursor while more match, and none on the last page', () => {
    const search = { query: 'earbuds', limit: 1, offset: 0 };
    const first = ucpSearchResponseOf({ products: [details()], total: 2 }, search, BASE);
    expect(first.ucp).toEqual({
      version: '2026-04-08',
      capabilities: { 'dev.ucp.shopping.catalog.search': [{ version: '2026-04-08' }] },
    });
    expect(first.pagination).toEqual({ has_next_page: true, cursor: cursorOf(1), total_count: 2 });
    const last = ucpSearchResponseOf({ products: [details()], total: 2 }, { ...search, offset: 1 }, BASE);
    expect(last.pagination).toEqual({ has_next_page: false, total_count: 2 });
    expect(ucpSearchResponseOf({ products: [], total: 0 }, search, BASE).pagination).toEqual({
      has_next_page: false,
      total_count: 0,
    });
  });
});

describe('UCP catalog lookup and get_product', () => {
  it('looks up each id once, keeps only ids that can be ours, and answers not_found for the rest', () => {
    const request = ucpLookupRequestSchema.parse({
      ids: ['product_7', 'sku-7', 'product_7', 'product_8'],
    });
    expect(lookupIdsOf(request)).toEqual(['product_7', 'product_8']);
    const answer = ucpLookupResponseOf(request, new Map([['product_7', details()]]), BASE);
    expect(answer.ucp.capabilities).toEqual({
      'dev.ucp.shopping.catalog.lookup': [{ version: '2026-04-08' }],
    });
    expect(answer.products.map((product) => product.id)).toEqual(['product_7']);
    expect(answer.products[0]!.variants[0]!.inputs).toEqual([{ id: 'product_7', match: 'exact' }]);
    expect(answer.messages).toEqual([
      { type: 'info', code: 'not_found', content: 'sku-7' },
      { type: 'info', code: 'not_found', content: 'product_8' },
    ]);
  });

  it('refuses, naming the field: no ids, more than 50 (request_too_large), filters', () => {
    expect(refusedPaths(ucpLookupRequestSchema, { ids: [] })).toEqual(['ids']);
    const tooMany = ucpLookupRequestSchema.safeParse({
      ids: Array.from({ length: 51 }, (_, i) => `product_${i + 1}`),
    });
    expect(tooMany.error?.issues.map(({ path, message }) => [path.join('.'), message])).toEqual([
      ['ids', 'must have at most 50 ids (request_too_large)'],
    ]);
    expect(refusedPaths(ucpLookupRequestSchema, { ids: ['product_1'], filters: {} })).toEqual(['filters']);
    expect(refusedPaths(ucpLookupRequestSchema, { ids: [''] })).toEqual(['ids.0']);
    expect(refusedPaths(ucpGetProductRequestSchema, {})).toEqual(['id']);
    expect(refusedPaths(ucpGetProductRequestSchema, { id: 'product_1', filters: { price: {} } })).toEqual([
      'filters',
    ]);
  });

  it('answers an unknown product with ucp.status error and an unrecoverable not_found, not a product', () => {
    expect(ucpGetProductResponseOf('product_404', undefined, BASE)).toEqual({
      ucp: {
        version: '2026-04-08',
        status: 'error',
        capabilities: { 'dev.ucp.shopping.catalog.lookup': [{ version: '2026-04-08' }] },
      },
      messages: [
        {
          type: 'error',
          code: 'not_found',
          content: 'Product not found: product_404',
          severity: 'unrecoverable',
        },
      ],
    });
    expect(ucpGetProductResponseOf('product_7', details(), BASE)).toMatchObject({
      product: { id: 'product_7', variants: [{ id: 'product_7' }] },
    });
  });
});

describe('UCP checkout totals (docs/protocols.md §2.3)', () => {
  it('lists goods, freight, tax and total as separate lines, per session and per line, and no zero discount', () => {
    const session = {
      id: 'chk_1',
      status: 'ready_for_complete',
      currency: 'USD',
      line_items: [
        {
          product_id: 'product_7',
          title: 'Earbuds',
          quantity: 4,
          unit_price: 1250,
          line_total: 5000,
          freight: 7500,
        },
      ],
      totals: { subtotal: 5000, freight: 7500, total: 12500 },
      messages: [],
      expires_at: '2026-01-02T09:00:00.000Z',
      payment_terms: 'net_30',
    } as unknown as CheckoutSessionView;
    const view = ucpCheckoutView(BASE, session);
    const lines = [
      // UCP's discount amounts are below zero (docs/protocols.md §4): there is no discount line.
      { type: 'subtotal', amount: 5000, display_text: 'Goods' },
      { type: 'fulfillment', amount: 7500, display_text: 'Freight' },
      { type: 'tax', amount: 0, display_text: 'Tax (invoiced by the seller, not collected here)' },
      { type: 'total', amount: 12500 },
    ];
    expect(view.totals).toEqual(lines);
    expect(view.line_items[0]!.totals).toEqual(lines);
    // A completed session's order carries UCP's required permalink_url.
    const completed = ucpCheckoutView(BASE, { ...session, status: 'completed' }, [
      { order_id: 41 },
      { order_id: 42 },
    ] as OrderView[]);
    expect(completed.order).toEqual({
      id: '41',
      permalink_url: `${BASE}/api/orders/41`,
      order_ids: [41, 42],
      payment_terms: 'net_30',
    });
  });
});

import { describe, expect, it } from '@jest/globals';
import type { catalogV1 } from '@marketplace/proto';
import { CatalogQueries } from '../src/contexts/catalog/catalog.queries.js';
import { ProductViews } from '../src/edge/product.views.js';
import type { CatalogClient } from '../src/contexts/catalog/catalog.client.js';
import type { SubscriptionCommands } from '../src/contexts/subscriptions/subscription.commands.js';
import { marketplaceResources, marketplaceStats } from '../src/edge/mcp/marketplace.resources.js';
import { feedItemOf } from '../src/contexts/catalog/feed.routes.js';
import { escapeMarkdown, productMarkdown } from '../src/contexts/catalog/markdown.routes.js';
import { reverseDomainOf } from '../src/edge/discovery/discovery.routes.js';

const BASE = 'https://market.test';
const views = new ProductViews(BASE);

const product = (overrides: Partial<catalogV1.Product> = {}): catalogV1.Product => ({
  id: 'product_7',
  title: 'Pallet of *Zephyrtone* earbuds [returns]',
  description: '# Not a heading\n- not a list\n1. not a list either <script>alert(1)</script>',
  priceCents: 1_250,
  currency: 'USD',
  availability: 'in_stock',
  version: 1,
  quantityAvailable: 200,
  imageUrls: ['/images/abc.png'],
  category: 'electronics',
  condition: 'customer_returns',
  brand: 'Zephyrtone',
  sku: 'SKU-7',
  originalRetailPriceCents: 4_000,
  minOrderQuantity: 10,
  minQuoteQuantity: 50,
  instantCheckout: false,
  promotePublicly: true,
  shipping: undefined,
  sellerAccountId: 3,
  seller: { name: 'Ana', company: 'Acme Surplus', country: 'US' },
  createdAtMs: Date.UTC(2026, 0, 1),
  updatedAtMs: Date.UTC(2026, 0, 2),
  discountPercent: 68,
  ...overrides,
});

const catalogWithStats = (): CatalogClient =>
  ({
    getCatalogStats: async () => ({
      publicProducts: 3,
      publicInStockProducts: 2,
      byCategory: [{ id: 'electronics', publicProducts: 3, publicInStockProducts: 2 }],
      byCondition: [{ id: 'overstock', publicProducts: 3, publicInStockProducts: 2 }],
    }),
  }) as unknown as CatalogClient;

describe('marketplace://stats', () => {
  const catalog = new CatalogQueries(catalogWithStats(), views);
  /** Never read by these tests. */
  const subscriptions = {} as SubscriptionCommands;
  const now = () => Date.UTC(2026, 5, 1, 12);

  it('counts public listings and the last 24 hours of quote requests and orders', async () => {
    const asked: number[] = [];
    const stats = await marketplaceStats({
      catalog,
      subscriptions,
      now,
      quoteRequestsSince: async (since) => (asked.push(since), 4),
      ordersSince: async (since) => (asked.push(since), 2),
    });
    expect(asked).toEqual([Date.UTC(2026, 5, 1, 12) - 86_400_000, Date.UTC(2026, 5, 1, 12) - 86_400_000]);
    expect(stats).toEqual({
      generated_at: '2026-06-01T12:00:00.000Z',
      listings: {
        public_products: 3,
        public_in_stock_products: 2,
        by_category: [{ id: 'electronics', public_products: 3, public_in_stock_products: 2 }],
        by_condition: [{ id: 'overstock', public_products: 3, public_in_stock_products: 2 }],
      },
      last_24_hours: { since: '2026-05-31T12:00:00.000Z', quote_requests: 4, orders: 2 },
    });
  });

  it('says null for the orders while the order client cannot count them', async () => {
    const stats = await marketplaceStats({ catalog, subscriptions, now, quoteRequestsSince: async () => 4 });
    expect(stats.last_24_hours).toMatchObject({ quote_requests: 4, orders: null });
  });

  it('is listed and readable through the resources', async () => {
    const resources = marketplaceResources({
      catalog,
      subscriptions,
      now,
      quoteRequestsSince: async () => 0,
    });
    expect(resources.fixed.map((resource) => resource.uri)).toEqual([
      'marketplace://stats',
      'marketplace://categories',
    ]);
    await expect(resources.find('marketplace://stats')!(undefined)).resolves.toMatchObject({
      listings: { public_products: 3 },
    });
    expect(resources.find('marketplace://subscriptions/sub_1')).toBeDefined();
  });
});

describe('markdown renditions', () => {
  it('render seller text literally: no headings, lists, links or HTML injected', () => {
    const text = escapeMarkdown('# Big [deal](http://evil.test) <b>now</b>\n- item\n12. twelve');
    expect(text).toBe('\\# Big \\[deal\\](http://evil.test) &lt;b&gt;now&lt;/b&gt;\n\\- item\n12\\. twelve');
  });

  it('show the facts a buyer decides on and the next steps for an agent', () => {
    const markdown = productMarkdown(views.detailsOf(product()), BASE);
    expect(markdown).toMatch(/^# Pallet of \\\*Zephyrtone\\\* earbuds \\\[returns\\\]\n/);
    expect(markdown).toContain('- **Unit price:** 12.50 USD');
    expect(markdown).toContain('- **Discount off retail:** 68%');
    expect(markdown).toContain('- **Seller:** Acme Surplus, US');
    expect(markdown).toContain('![Image 1](https://market.test/images/abc.png)');
    expect(markdown).toContain('&lt;script&gt;');
    expect(markdown).not.toContain('<script>');
    expect(markdown).toContain('`request_quote`');
    expect(markdown).not.toContain('**Freight:**');
  });

  it('state the freight terms when the seller set them', () => {
    const freightOf = (shipping: catalogV1.Product['shipping']) =>
      productMarkdown(views.detailsOf(product({ shipping })), BASE);
    expect(freightOf({ mode: 'flat_per_order', cents: 15_000 })).toContain(
      '- **Freight:** 150.00 USD per order',
    );
    expect(freightOf({ mode: 'per_unit', cents: 250 })).toContain('- **Freight:** 2.50 USD per unit');
    expect(freightOf({ mode: 'included' })).toContain('- **Freight:** included in the price');
    expect(freightOf({ mode: 'buyer_pickup', shipFromRegion: 'Reno, NV' })).toContain(
      '- **Freight:** buyer pickup from Reno, NV',
    );
    expect(freightOf({ mode: 'quoted_on_request' })).toMatch(/Freight:\*\* quoted on request.*request_quote/);
  });
});

describe('ACP feed items', () => {
  it('carry the feed fields: price as "12.50 USD", availability, inventory, seller and links', () => {
    const item = feedItemOf(views.detailsOf(product()), BASE);
    expect(item).toMatchObject({
      id: 'product_7',
      link: `${BASE}/api/ucp/catalog/products/product_7`,
      enable_search: true,
      enable_checkout: false,
      image_link: `${BASE}/images/abc.png`,
      condition: 'used',
      marketplace_condition: 'customer_returns',
      product_category: 'Electronics',
      brand: 'Zephyrtone',
      mpn: 'SKU-7',
      price: '12.50 USD',
      original_retail_price: '40.00 USD',
      availability: 'in_stock',
      inventory_quantity: 200,
      seller_name: 'Acme Surplus',
      seller_url: BASE,
      // docs/protocols.md §3.1 (Merchant, Returns): seller_tos, return_policy (URL) and return_window (days).
      seller_tos: `${BASE}/agents/terms.md`,
      return_policy: `${BASE}/agents/returns.md`,
      return_window: 2,
      markdown_link: `${BASE}/agents/products/product_7.md`,
    });
    expect(item).not.toHaveProperty('additional_image_link');
  });

  it('leave out what a listing does not have', () => {
    const item = feedItemOf(
      views.detailsOf(product({ imageUrls: [], brand: '', condition: '', seller: undefined })),
      BASE,
    );
    expect(item).not.toHaveProperty('image_link');
    expect(item).not.toHaveProperty('brand');
    expect(item).not.toHaveProperty('condition');
    expect(item).not.toHaveProperty('freight');
    expect(item.seller_name).toBe('Seller 3');
  });

  it('show freight apart from the price, as the seller set it', () => {
    const freightOf = (shipping: catalogV1.Product['shipping']) =>
      feedItemOf(views.detailsOf(product({ shipping })), BASE).freight;
    expect(freightOf({ mode: 'flat_per_order', cents: 15_000 })).toEqual({
      mode: 'flat_per_order',
      price_per_order: '150.00 USD',
    });
    expect(freightOf({ mode: 'per_unit', cents: 250 })).toEqual({
      mode: 'per_unit',
      price_per_unit: '2.50 USD',
    });
    expect(freightOf({ mode: 'buyer_pickup', shipFromRegion: 'Reno, NV' })).toEqual({
      mode: 'buyer_pickup',
      ship_from_region: 'Reno, NV',
    });
    expect(freightOf({ mode: 'quoted_on_request' })).toEqual({ mode: 'quoted_on_request' });
    expect(views.detailsOf(product({ shipping: { mode: 'per_unit', cents: 250 } })).shipping).toEqual({
      mode: 'per_unit',
      cents: 250,
    });
  });
});

describe('discovery helpers', () => {
  it('name our UCP namespace by the reversed public host', () => {
    expect(reverseDomainOf('https://market.example.com')).toBe('com.example.market');
    expect(reverseDomainOf('http://localhost:8080')).toBe('localhost');
  });
});

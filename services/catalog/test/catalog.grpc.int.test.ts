import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import type { Database } from '@marketplace/database';
import { dropSchema, freshSchemaName, testEngines } from '@marketplace/database/testing';
import { ManualClock, createLogger } from '@marketplace/platform';
import { catalogV1 } from '@marketplace/proto';
import type { GrpcClient } from '@marketplace/rpc';
import { createGrpcClient } from '@marketplace/rpc';
import type { CatalogServiceHandle } from '../src/index.js';
import { startCatalogService } from '../src/index.js';
import type { CapturingEventLog } from './support/capturing-event-log.js';
import { capturingEventLog } from './support/capturing-event-log.js';
import { accountCreated } from './support/account-events.js';
import { delivered, listingCreated, listingMessage, SELLER } from './support/listing-events.js';

const logger = createLogger({ service: 'catalog-test', level: 'silent' });

describe.each(testEngines())('CatalogService over gRPC on $name', ({ create }) => {
  const schema = freshSchemaName('catalog_grpc');
  let db: Database;
  let log: CapturingEventLog;
  let service: CatalogServiceHandle;
  let catalog: GrpcClient<catalogV1.CatalogServiceDefinition>;

  const search = (request: Partial<catalogV1.SearchProductsRequest>) =>
    catalog.client.searchProducts({ limit: 20, offset: 0, ...request });
  const ids = (products: readonly catalogV1.Product[]): string[] => products.map((product) => product.id);

  beforeAll(async () => {
    db = await create();
    log = capturingEventLog();
    service = await startCatalogService({
      db,
      log,
      logger,
      clock: new ManualClock(0),
      grpc: { host: '127.0.0.1', port: 0 },
      schema,
    });
    catalog = createGrpcClient(catalogV1.CatalogServiceDefinition, service.address);
    const listings = [
      listingMessage(1, { name: 'Cordless drill, 18 V', category: 'tools', priceCents: 4_500 }),
      listingMessage(2, { name: 'Cordless drill, 12 V', category: 'tools', priceCents: 2_500, quantity: 0 }),
      listingMessage(3, { name: 'Drill bits', category: 'tools', condition: 'salvage', priceCents: 900 }),
      listingMessage(4, { name: 'Cordless drill, private', category: 'tools', promotePublicly: false }),
      listingMessage(5, { name: 'Kids drill toy', category: 'toys', priceCents: 1_500 }),
    ];
    for (const listing of listings) await log.deliver(delivered(listingCreated(listing)));
  });

  afterAll(async () => {
    catalog.close();
    await service.stop();
    await dropSchema(db, schema);
    await db.close();
  });

  it('is ready once started, with the schema migrated and the log consumer open', () => {
    expect(service.isReady()).toBe(true);
    expect(service.name).toBe('catalog');
  });

  it('searches public listings with AND semantics and answers the total of all matches', async () => {
    const page = await search({ query: 'cordless drill', limit: 1 });

    expect(page.total).toBe(2);
    expect(ids(page.products)).toHaveLength(1);
    const rest = await search({ query: 'cordless drill', limit: 1, offset: 1 });
    expect([...ids(page.products), ...ids(rest.products)].sort()).toEqual(['product_1', 'product_2']);
  });

  it('maps a product with its availability, images and seller', async () => {
    const { products } = await search({ query: '12 V' });

    expect(products).toEqual([
      expect.objectContaining({
        id: 'product_2',
        title: 'Cordless drill, 12 V',
        priceCents: 2_500,
        currency: 'USD',
        availability: 'out_of_stock',
        quantityAvailable: 0,
        imageUrls: ['https://images.example/2.jpg'],
        category: 'tools',
        condition: 'overstock',
        promotePublicly: true,
        sellerAccountId: SELLER,
      }),
    ]);
    const { products: inStock } = await search({ query: '18 V' });
    expect(inStock[0]?.availability).toBe('in_stock');
  });

  it('filters by category, condition and price range, newest first without a query', async () => {
    expect(ids((await search({ category: 'tools' })).products)).toEqual([
      'product_3',
      'product_2',
      'product_1',
    ]);
    expect(ids((await search({ condition: 'salvage' })).products)).toEqual(['product_3']);
    expect(ids((await search({ minPriceCents: 1_500, maxPriceCents: 4_500 })).products)).toEqual([
      'product_5',
      'product_2',
      'product_1',
    ]);
  });

  it('rejects an invalid search with INVALID_ARGUMENT naming each field', async () => {
    await expect(search({ limit: 101, category: 'cars' })).rejects.toMatchObject({
      kind: 'validation',
      violations: expect.arrayContaining([
        { path: 'limit', message: 'must be at most 100' },
        { path: 'category', message: expect.stringContaining('must be one of') },
      ]),
    });
    await expect(search({ limit: 0 })).rejects.toMatchObject({ kind: 'validation' });
  });

  it('gets a public product for anyone', async () => {
    const { product } = await catalog.client.getProduct({ productId: 'product_1' });

    // The version the catalog applied: a writer (an import's pace) compares it with the version it wrote.
    expect(product).toMatchObject({
      id: 'product_1',
      title: 'Cordless drill, 18 V',
      minOrderQuantity: 10,
      version: 1,
    });
  });

  it('gets a listing that was not promoted only for its own seller; NOT_FOUND for others', async () => {
    const { product } = await catalog.client.getProduct({ productId: 'product_4', viewerAccountId: SELLER });
    expect(product?.promotePublicly).toBe(false);

    await expect(catalog.client.getProduct({ productId: 'product_4' })).rejects.toMatchObject({
      kind: 'not_found',
    });
    await expect(
      catalog.client.getProduct({ productId: 'product_4', viewerAccountId: SELLER + 1 }),
    ).rejects.toMatchObject({ kind: 'not_found' });
  });

  it('answers NOT_FOUND for an unknown product and INVALID_ARGUMENT for a malformed id', async () => {
    await expect(catalog.client.getProduct({ productId: 'product_999' })).rejects.toMatchObject({
      kind: 'not_found',
    });
    await expect(catalog.client.getProduct({ productId: 'drill' })).rejects.toMatchObject({
      kind: 'validation',
      violations: [{ path: 'productId', message: 'must look like product_<number>' }],
    });
  });

  it('reports the discount off the original retail price and filters on a minimum discount', async () => {
    const { product } = await catalog.client.getProduct({ productId: 'product_3' });
    expect(product?.discountPercent).toBe(69);

    expect(ids((await search({ minDiscountPercent: 50 })).products)).toEqual(['product_3']);
    expect(ids((await search({ query: 'drill', minDiscountPercent: 16 })).products).sort()).toEqual([
      'product_2',
      'product_3',
      'product_5',
    ]);
    await expect(search({ minDiscountPercent: 101 })).rejects.toMatchObject({
      kind: 'validation',
      violations: [{ path: 'minDiscountPercent', message: 'must be at most 100' }],
    });
  });

  it('counts public, in-stock listings per category, every category listed', async () => {
    const { categories } = await catalog.client.listCategories({});

    expect(categories).toHaveLength(11);
    expect(categories).toEqual(
      expect.arrayContaining([
        { id: 'tools', productCount: 2 },
        { id: 'toys', productCount: 1 },
        { id: 'electronics', productCount: 0 },
      ]),
    );
  });

  it('recommends a price from the table, then from enough comparable public listings', async () => {
    const request = { category: 'kitchenware', condition: 'shelf_pulls', originalRetailCents: 20_000 };
    const tableOnly = await catalog.client.recommendPrice(request);
    expect(tableOnly).toMatchObject({ recommendedUnitPriceCents: 9_000, basis: { comparableListings: 0 } });

    const comparable = (n: number, overrides: Partial<Parameters<typeof listingMessage>[1]> = {}) =>
      listingMessage(n, {
        name: `Pans ${n}`,
        category: 'kitchenware',
        condition: 'shelf_pulls',
        priceCents: (n - 10) * 100,
        originalRetailPriceCents: 10_000,
        ...overrides,
      });
    const listings = [
      ...[11, 12, 13, 14, 15].map((n) => comparable(n)),
      comparable(16, { priceCents: 9_000, promotePublicly: false }),
      comparable(17, { originalRetailPriceCents: undefined }),
    ];
    for (const listing of listings) await log.deliver(delivered(listingCreated(listing)));

    const recommendation = await catalog.client.recommendPrice({ ...request, quantity: 1 });
    expect(recommendation.basis).toMatchObject({ comparableListings: 5, comparableMedianRatio: 0.03 });
    expect(recommendation.recommendedUnitPriceCents).toBe(4_800);
    await expect(
      catalog.client.recommendPrice({ ...request, condition: 'used', originalRetailCents: 0 }),
    ).rejects.toMatchObject({ kind: 'validation' });
  });

  it('names the seller from its account events, once they arrived; buyers and older versions change nothing', async () => {
    const before = await catalog.client.getProduct({ productId: 'product_1' });
    expect(before.product?.seller).toBeUndefined();

    const created = accountCreated(SELLER, {
      role: 'seller',
      name: 'Acme Surplus',
      company: 'Acme Surplus LLC',
      country: 'US',
    });
    await log.deliver(created);
    await log.deliver(created);
    await log.deliver(accountCreated(SELLER + 1, { role: 'buyer', name: 'A buyer' }));

    const { product } = await catalog.client.getProduct({ productId: 'product_1' });
    expect(product?.seller).toEqual({ name: 'Acme Surplus', company: 'Acme Surplus LLC', country: 'US' });
    // The feed's page names the seller as the product page does (it once said "Seller <id>").
    const feed = await catalog.client.listPublicProducts({ cursor: '', limit: 200 });
    expect(feed.products.find((found) => found.id === 'product_1')?.seller).toEqual(product?.seller);
    const { products } = await search({ query: 'drill' });
    expect(products.every((found) => found.seller === undefined)).toBe(true);

    await log.deliver(accountCreated(SELLER, { role: 'seller', name: 'Acme Renamed' }, { version: 2 }));
    await log.deliver(accountCreated(SELLER, { role: 'seller', name: 'Acme Surplus' }, { version: 1 }));
    const renamed = await catalog.client.getProduct({ productId: 'product_1' });
    expect(renamed.product?.seller).toEqual({ name: 'Acme Renamed', company: '', country: '' });
  });
});

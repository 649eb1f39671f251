import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import type { Database } from '@marketplace/database';
import { dropSchema, freshSchemaName, testEngines } from '@marketplace/database/testing';
import { ManualClock, createLogger } from '@marketplace/platform';
import { catalogV1 } from '@marketplace/proto';
import type { GrpcClient } from '@marketplace/rpc';
import { createGrpcClient } from '@marketplace/rpc';
import type { CatalogServiceHandle, CatalogServiceOptions } from '../src/index.js';
import { startCatalogService } from '../src/index.js';
import type { CapturingEventLog } from './support/capturing-event-log.js';
import { capturingEventLog } from './support/capturing-event-log.js';
import type { ConceptEmbedder } from './support/concept-embedder.js';
import { conceptEmbedder } from './support/concept-embedder.js';
import { delivered, listingChanged, listingCreated, listingMessage } from './support/listing-events.js';

const logger = createLogger({ service: 'catalog-test', level: 'silent' });

describe.each(testEngines())('semantic search, the public feed and stats on $name', ({ create }) => {
  const schema = freshSchemaName('catalog_semantic');
  let db: Database;
  let log: CapturingEventLog;
  let embedder: ConceptEmbedder;
  let service: CatalogServiceHandle;
  let catalog: GrpcClient<catalogV1.CatalogServiceDefinition>;

  const start = async (options: Partial<CatalogServiceOptions> = {}): Promise<void> => {
    log = capturingEventLog();
    service = await startCatalogService({
      db,
      log,
      logger,
      clock: new ManualClock(0),
      grpc: { host: '127.0.0.1', port: 0 },
      schema,
      embedder,
      ...options,
    });
    catalog = createGrpcClient(catalogV1.CatalogServiceDefinition, service.address);
  };
  const stop = async (): Promise<void> => {
    catalog.close();
    await service.stop();
  };
  const semantic = (request: Partial<catalogV1.SemanticSearchRequest>) =>
    catalog.client.semanticSearch({ query: 'power tool for screws', limit: 10, ...request });
  const ids = (matches: readonly catalogV1.SemanticMatch[]): string[] => matches.map((m) => m.product!.id);

  beforeAll(async () => {
    db = await create();
    embedder = conceptEmbedder();
    await start();
    const listings = [
      listingMessage(1, { name: 'Cordless drill', category: 'tools', priceCents: 4_500 }),
      listingMessage(2, { name: 'Drill bits', category: 'tools', condition: 'salvage', priceCents: 900 }),
      listingMessage(3, { name: 'Drill, private lot', category: 'tools', promotePublicly: false }),
      listingMessage(4, { name: 'Kids toy', category: 'toys', priceCents: 1_500, quantity: 0 }),
      listingMessage(5, { name: 'USB chargers', description: 'boxed', priceCents: 700 }),
    ];
    for (const listing of listings) await log.deliver(delivered(listingCreated(listing)));
  }, 60_000);

  afterAll(async () => {
    await stop();
    await dropSchema(db, schema);
    await db.close();
  });

  it('ranks public listings by meaning, most similar first, with similarities in [0, 1]', async () => {
    const { matches } = await semantic({ query: 'tool for screws', limit: 3 });

    expect(ids(matches).slice(0, 2).sort()).toEqual(['product_1', 'product_2']);
    expect(ids(matches)).not.toContain('product_3');
    for (const { similarity } of matches) {
      expect(similarity).toBeGreaterThanOrEqual(0);
      expect(similarity).toBeLessThanOrEqual(1);
    }
    const similarities = matches.map((match) => match.similarity);
    expect(similarities).toEqual([...similarities].sort((a, b) => b - a));
    expect(matches[0]!.similarity).toBeGreaterThan(0.9);
  });

  it('applies category, condition and maximum price to the nearest candidates', async () => {
    expect(ids((await semantic({ condition: 'salvage' })).matches)).toEqual(['product_2']);
    expect(ids((await semantic({ maxPriceCents: 1_000 })).matches).sort()).toEqual([
      'product_2',
      'product_5',
    ]);
    expect(ids((await semantic({ query: 'plaything for children', category: 'toys' })).matches)).toEqual([
      'product_4',
    ]);
  });

  it('rejects bad input naming every field', async () => {
    await expect(semantic({ query: ' ', limit: 51, category: 'boats' })).rejects.toMatchObject({
      kind: 'validation',
      violations: expect.arrayContaining([
        expect.objectContaining({ path: 'query' }),
        expect.objectContaining({ path: 'limit' }),
        expect.objectContaining({ path: 'category' }),
      ]),
    });
    await expect(semantic({ query: 'x'.repeat(1_001) })).rejects.toMatchObject({ kind: 'validation' });
  });

  it('pages through every public listing by product number, in stock or not, with a cursor', async () => {
    const first = await catalog.client.listPublicProducts({ cursor: '', limit: 2 });
    const second = await catalog.client.listPublicProducts({ cursor: first.nextCursor, limit: 2 });

    expect(first.products.map((p) => p.id)).toEqual(['product_1', 'product_2']);
    expect(second.products.map((p) => p.id)).toEqual(['product_4', 'product_5']);
    expect(second.products[0]).toMatchObject({
      availability: 'out_of_stock',
      updatedAtMs: expect.any(Number),
    });
    // The last page says so itself rather than pointing at an empty one.
    expect(second.nextCursor).toBe('');
    const all = await catalog.client.listPublicProducts({ cursor: '', limit: 200 });
    expect(all.nextCursor).toBe('');
    expect(all.products).toHaveLength(4);
    await expect(catalog.client.listPublicProducts({ cursor: 'abc', limit: 201 })).rejects.toMatchObject({
      kind: 'validation',
      violations: [expect.objectContaining({ path: 'cursor' }), expect.objectContaining({ path: 'limit' })],
    });
  });

  it('counts public listings by category and by condition', async () => {
    const stats = await catalog.client.getCatalogStats({});

    expect(stats).toMatchObject({ publicProducts: 4, publicInStockProducts: 3 });
    expect(stats.byCategory.find((row) => row.id === 'tools')).toEqual({
      id: 'tools',
      publicProducts: 2,
      publicInStockProducts: 2,
    });
    expect(stats.byCategory.find((row) => row.id === 'toys')).toMatchObject({ publicInStockProducts: 0 });
    expect(stats.byCondition.map((row) => row.id)).toEqual([
      'salvage',
      'customer_returns',
      'shelf_pulls',
      'overstock',
      'new_or_refurbished',
    ]);
    expect(stats.byCondition.find((row) => row.id === 'overstock')).toMatchObject({ publicProducts: 3 });
  });

  it('keeps a listing the embedder failed on searchable by words, and embeds it with the next one', async () => {
    embedder.failing = true;
    await log.deliver(
      delivered(listingCreated(listingMessage(6, { name: 'Drill press', category: 'tools' }))),
    );
    const lexical = await catalog.client.searchProducts({ query: 'press', limit: 5, offset: 0 });
    expect(lexical.products.map((p) => p.id)).toEqual(['product_6']);
    await expect(semantic({})).rejects.toMatchObject({ kind: 'unavailable' });
    embedder.failing = false;
    expect(ids((await semantic({})).matches)).not.toContain('product_6');

    await log.deliver(delivered(listingCreated(listingMessage(7, { name: 'Toy drill', category: 'toys' }))));
    expect(ids((await semantic({})).matches)).toEqual(expect.arrayContaining(['product_6', 'product_7']));
  });

  it('follows updates in both searches and the feed: new text, sold out, no longer promoted, stale events', async () => {
    const renamed = listingMessage(5, { name: 'Toy chargers for kids', description: 'boxed', version: 2 });
    await log.deliver(delivered(listingChanged(renamed)));
    const toys = await semantic({ query: 'plaything for children', limit: 2 });
    expect(ids(toys.matches)).toContain('product_5');
    const lexical = await catalog.client.searchProducts({ query: 'toy chargers', limit: 5, offset: 0 });
    expect(lexical.products.map((p) => p.id)).toEqual(['product_5']);

    // An older event arriving late changes nothing.
    await log.deliver(delivered(listingCreated(listingMessage(5, { name: 'USB chargers', version: 1 }))));
    expect((await catalog.client.getProduct({ productId: 'product_5' })).product?.title).toBe(
      'Toy chargers for kids',
    );

    const soldOut = listingMessage(5, {
      name: 'Toy chargers for kids',
      description: 'boxed',
      quantity: 0,
      version: 3,
    });
    await log.deliver(delivered(listingChanged(soldOut, 'quantitySet')));
    const [match] = (await semantic({ query: 'plaything for children', limit: 50 })).matches.filter(
      (m) => m.product!.id === 'product_5',
    );
    expect(match?.product).toMatchObject({ availability: 'out_of_stock', quantityAvailable: 0 });

    const hidden = listingMessage(5, { promotePublicly: false, version: 4 });
    await log.deliver(delivered(listingChanged(hidden)));
    expect(ids((await semantic({ query: 'plaything for children', limit: 50 })).matches)).not.toContain(
      'product_5',
    );
    const feed = await catalog.client.listPublicProducts({ cursor: '', limit: 200 });
    expect(feed.products.map((p) => p.id)).not.toContain('product_5');
  });

  it('reuses the stored embeddings after a restart instead of embedding every listing again', async () => {
    await stop();
    embedder.embedded.length = 0;
    await start();

    expect(embedder.embedded).toEqual(['dimensions']);
    expect(ids((await semantic({ limit: 3 })).matches)).toHaveLength(3);
  });

  it('answers unavailable without an embedder, after checking the input', async () => {
    await stop();
    await start({ embedder: undefined });

    await expect(semantic({})).rejects.toMatchObject({ kind: 'unavailable' });
    await expect(semantic({ limit: 0 })).rejects.toMatchObject({ kind: 'validation' });
  });
});

import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import type { Database } from '@marketplace/database';
import { createEmbeddedDatabase } from '@marketplace/database';
import type { EventLog } from '@marketplace/eventlog';
import { createEmbeddedEventLog } from '@marketplace/eventlog';
import { ManualClock, createLogger } from '@marketplace/platform';
import { catalogV1 } from '@marketplace/proto';
import { createGrpcClient } from '@marketplace/rpc';
import type { CatalogServiceHandle } from '../src/index.js';
import { startCatalogService } from '../src/index.js';
import { eventually } from './support/eventually.js';
import { accountCreated } from './support/account-events.js';
import { listingCreated, listingMessage, SELLER } from './support/listing-events.js';

const logger = createLogger({ service: 'catalog-test', level: 'silent' });
const TOPIC = 'marketplace.listing.v1';

/** The catalog fed through the embedded EventLog on PGlite, as `pnpm start` runs it, checked over gRPC. */
describe('catalog fed by the embedded event log on PGlite', () => {
  let db: Database;
  let log: EventLog;
  let service: CatalogServiceHandle | undefined;

  const start = async (): Promise<CatalogServiceHandle> =>
    (service = await startCatalogService({
      db,
      log,
      logger,
      clock: new ManualClock(0),
      grpc: { host: '127.0.0.1', port: 0 },
    }));
  const searchIds = async (handle: CatalogServiceHandle, query: string): Promise<string[]> => {
    const catalog = createGrpcClient(catalogV1.CatalogServiceDefinition, handle.address);
    try {
      const { products } = await catalog.client.searchProducts({ query, limit: 10, offset: 0 });
      return products.map((product) => product.id);
    } finally {
      catalog.close();
    }
  };

  const sellerOf = async (handle: CatalogServiceHandle, productId: string) => {
    const catalog = createGrpcClient(catalogV1.CatalogServiceDefinition, handle.address);
    try {
      return (await catalog.client.getProduct({ productId })).product?.seller;
    } finally {
      catalog.close();
    }
  };

  beforeAll(async () => {
    db = await createEmbeddedDatabase();
    log = await createEmbeddedEventLog({ db, schema: 'eventlog', pollIntervalMs: 100 });
  });

  afterAll(async () => {
    await service?.stop();
    await log.close();
    await db.close();
  });

  it('turns a published ListingCreated into a search hit', async () => {
    const handle = await start();
    const created = listingCreated(listingMessage(1, { name: 'Sony WH-1000XM4 headphones, 40 units' }));

    await log.publish(TOPIC, [created, created]);

    await eventually(async () => expect(await searchIds(handle, 'wh1000xm4')).toEqual(['product_1']));
    const { rows } = await db.query<{ n: number }>('select count(*)::int as n from catalog.products');
    expect(rows[0]?.n).toBe(1);
  });

  it('serves what it had from its table right after a restart, then follows the log again', async () => {
    await service?.stop();

    const handle = await start();

    expect(handle.isReady()).toBe(true);
    expect(await searchIds(handle, 'headphones')).toEqual(['product_1']);
    await log.publish(TOPIC, [listingCreated(listingMessage(2, { name: 'Bose headphones, 12 units' }))]);
    await eventually(async () =>
      expect((await searchIds(handle, 'headphones')).sort()).toEqual(['product_1', 'product_2']),
    );
  });

  it('rebuilds from the log: the replay brings every listing and seller back', async () => {
    const handle = service!;
    const { key, value, headers } = accountCreated(SELLER, {
      role: 'seller',
      name: 'Tarnwick',
      country: 'GB',
    });
    await log.publish('marketplace.account.v1', [{ key, value, headers }]);
    await eventually(async () =>
      expect(await sellerOf(handle, 'product_1')).toMatchObject({ name: 'Tarnwick' }),
    );

    await handle.rebuild();

    const { rows } = await db.query<{ projection: string; generation: number }>(
      'select projection, generation from catalog.projection_generations order by projection',
    );
    expect(rows).toEqual([
      { projection: 'catalog-search-projection', generation: 2 },
      { projection: 'catalog-seller-projection', generation: 2 },
    ]);
    await eventually(async () =>
      expect((await searchIds(handle, 'headphones')).sort()).toEqual(['product_1', 'product_2']),
    );
    await eventually(async () =>
      expect(await sellerOf(handle, 'product_1')).toEqual({ name: 'Tarnwick', company: '', country: 'GB' }),
    );
    expect(handle.isReady()).toBe(true);
  });
});

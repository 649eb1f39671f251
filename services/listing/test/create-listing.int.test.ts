import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import type { Database } from '@marketplace/database';
import { migrate } from '@marketplace/database';
import { dropSchema, freshSchemaName, testEngines } from '@marketplace/database/testing';
import type { EventStore } from '@marketplace/eventsourcing';
import { createPostgresEventStore } from '@marketplace/eventsourcing';
import { AppError, ManualClock } from '@marketplace/platform';
import { listingMigrations } from '../src/adapters/listing.migrations.js';
import { productNumberSequence } from '../src/adapters/product-number.sequence.js';
import type { CreateListingInput, ListingDependencies } from '../src/application/create-listing.js';
import { createListing } from '../src/application/create-listing.js';
import { TestImages } from './support/test-images.js';

const NOW = Date.UTC(2026, 8, 1, 12, 0, 0);

let images: TestImages;

const input = (name = 'Pallet of USB-C chargers'): CreateListingInput => ({
  sellerAccountId: 7,
  draft: {
    name,
    description: '480 units, 65 W, boxed',
    priceCents: 1_250,
    quantity: 480,
    imageUrl: images.server.imageUrl('charger'),
  },
  actor: { kind: 'seller', id: '7' },
  correlationId: 'req-1',
});

describe.each(testEngines())('createListing on $name', ({ create }) => {
  const schema = freshSchemaName('listing_test');
  let db: Database;
  let store: EventStore;
  let deps: ListingDependencies;

  beforeAll(async () => {
    db = await create();
    images = await TestImages.start();
    await migrate(db, schema, listingMigrations);
    store = createPostgresEventStore({ db, schema });
    deps = {
      db,
      store,
      clock: new ManualClock(NOW),
      allocateProductNumber: productNumberSequence(schema),
      ...images.dependencies(db, schema),
    };
  });

  afterAll(async () => {
    await images.stop();
    await dropSchema(db, schema);
    await db.close();
  });

  it('allocates a product number and appends ListingCreated as the first event of the stream', async () => {
    const { listing, version } = await createListing(deps, input());

    expect(listing).toMatchObject({
      productId: expect.stringMatching(/^product_[1-9][0-9]*$/),
      priceCents: 1_250,
    });
    expect(listing.sku).toBe(listing.productId.replace('product_', 'SKU-'));
    expect(version).toBe(1);
    const stream = await store.readStream(listing.productId);
    expect(stream.version).toBe(1);
    expect(stream.events).toEqual([
      expect.objectContaining({
        streamId: listing.productId,
        streamType: 'listing',
        version: 1,
        type: 'ListingCreated',
        data: { listing },
        metadata: expect.objectContaining({ actor: { kind: 'seller', id: '7' }, correlationId: 'req-1' }),
        occurredAt: NOW,
      }),
    ]);
  });

  it('creates a new listing for every call, also for the same draft and sku', async () => {
    const first = await createListing(deps, { ...input(), draft: { ...input().draft, sku: 'CHG-65' } });
    const second = await createListing(deps, { ...input(), draft: { ...input().draft, sku: 'CHG-65' } });
    expect(second.listing.productId).not.toBe(first.listing.productId);
    expect(second.listing.sku).toBe(first.listing.sku);
  });

  it('appends nothing for an invalid draft', async () => {
    const eventCount = async (): Promise<unknown> =>
      (await db.query(`select count(*)::int as n from "${schema}".events`)).rows[0];
    const before = await eventCount();
    const attempt = createListing(deps, input(''));
    await expect(attempt).rejects.toBeInstanceOf(AppError);
    await expect(attempt).rejects.toMatchObject({
      kind: 'validation',
      violations: [{ path: 'name', message: 'is required' }],
    });
    expect(await eventCount()).toEqual(before);
  });

  it('gives 50 concurrent creates 50 distinct product ids, each with its own stream', async () => {
    const created = await Promise.all(
      Array.from({ length: 50 }, (_, n) => createListing(deps, input(`Lot ${n}`))),
    );
    const ids = new Set(created.map(({ listing }) => listing.productId));
    expect(ids.size).toBe(50);
    const { rows } = await db.query<{ stream_id: string }>(
      `select stream_id from "${schema}".events where stream_id = any($1::text[])`,
      [[...ids]],
    );
    expect(new Set(rows.map((row) => row.stream_id))).toEqual(ids);
  });
});

import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import type { Database } from '@marketplace/database';
import { migrate } from '@marketplace/database';
import { dropSchema, freshSchemaName, testEngines } from '@marketplace/database/testing';
import type { EventStore } from '@marketplace/eventsourcing';
import { createPostgresEventStore, IdempotencyKeys } from '@marketplace/eventsourcing';
import { AppError, ManualClock } from '@marketplace/platform';
import { listingMigrations } from '../src/adapters/listing.migrations.js';
import { productNumberSequence } from '../src/adapters/product-number.sequence.js';
import type { CreateListingInput, ListingDependencies } from '../src/application/create-listing.js';
import { createListing } from '../src/application/create-listing.js';
import { TestImages } from './support/test-images.js';
import { SellerListingsTable } from '../src/adapters/seller-listings.table.js';

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
      idempotencyKeys: new IdempotencyKeys(db, schema, new ManualClock(NOW)),
      sellerListings: new SellerListingsTable(schema),
      ...images.dependencies(schema),
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

  describe('with an idempotency key', () => {
    let keys = 0;
    const keyed = (draftName: string, sellerAccountId = 7): CreateListingInput => ({
      ...input(draftName),
      sellerAccountId,
      actor: { kind: 'seller', id: String(sellerAccountId) },
      idempotencyKey: `listing-key-${++keys}`,
    });
    const streamsNamed = async (name: string): Promise<string[]> => {
      const { rows } = await db.query<{ stream_id: string }>(
        `select stream_id from "${schema}".events where data->'listing'->>'name' = $1 and version = 1`,
        [name],
      );
      return rows.map((row) => row.stream_id);
    };

    it('answers a repeat with the listing it created, without fetching its image or appending again', async () => {
      const first = keyed('Keyed pallet of chargers');
      const created = await createListing(deps, first);
      const fetches = images.server.requests();
      const repeated = await createListing(deps, { ...first, correlationId: 'req-retry' });
      expect(repeated).toEqual(created);
      expect(images.server.requests()).toBe(fetches);
      expect(await streamsNamed('Keyed pallet of chargers')).toEqual([created.listing.productId]);
    });

    it('refuses the same key with another draft as an idempotency conflict, appending nothing', async () => {
      const first = keyed('Keyed lot of cables');
      await createListing(deps, first);
      const changed = createListing(deps, { ...first, draft: { ...first.draft, priceCents: 999 } });
      await expect(changed).rejects.toBeInstanceOf(AppError);
      await expect(changed).rejects.toMatchObject({ kind: 'idempotency_conflict' });
      expect(await streamsNamed('Keyed lot of cables')).toHaveLength(1);
    });

    it('creates one listing for concurrent requests with one key', async () => {
      const request = keyed('Keyed racing lot');
      const answers = await Promise.all(Array.from({ length: 5 }, () => createListing(deps, request)));
      const ids = new Set(answers.map(({ listing }) => listing.productId));
      expect(ids.size).toBe(1);
      expect(await streamsNamed('Keyed racing lot')).toEqual([...ids]);
    });

    it('records nothing for a draft the rules refuse: the key then creates the corrected listing', async () => {
      const refused = { ...keyed('Keyed corrected lot'), draft: { ...input().draft, name: '' } };
      await expect(createListing(deps, refused)).rejects.toMatchObject({ kind: 'validation' });
      const corrected = await createListing(deps, { ...refused, draft: input('Keyed corrected lot').draft });
      expect(await streamsNamed('Keyed corrected lot')).toEqual([corrected.listing.productId]);
    });

    it("keeps one seller's keys apart from another's", async () => {
      const mine = keyed('Keyed shared-key lot', 7);
      const theirs = { ...keyed('Keyed shared-key lot', 8), idempotencyKey: mine.idempotencyKey };
      const [a, b] = [await createListing(deps, mine), await createListing(deps, theirs)];
      expect(a.listing.productId).not.toBe(b.listing.productId);
      expect(b.listing.sellerAccountId).toBe(8);
    });

    it('refuses a malformed key as a validation error on idempotency_key', async () => {
      await expect(
        createListing(deps, { ...keyed('Badly keyed lot'), idempotencyKey: 'bad\nkey' }),
      ).rejects.toMatchObject({
        kind: 'validation',
        violations: [{ path: 'idempotency_key', message: expect.stringContaining('printable ASCII') }],
      });
      expect(await streamsNamed('Badly keyed lot')).toEqual([]);
    });
  });
});

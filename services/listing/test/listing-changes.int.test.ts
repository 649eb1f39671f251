import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import type { Database } from '@marketplace/database';
import { dropSchema, freshSchemaName, testEngines } from '@marketplace/database/testing';
import type { DeliveredMessage, EventLog } from '@marketplace/eventlog';
import { createEmbeddedEventLog } from '@marketplace/eventlog';
import { createEmlMailer } from '@marketplace/mailer';
import type { ServiceHandle } from '@marketplace/platform';
import { AppError, createLogger, ManualClock } from '@marketplace/platform';
import { listingV1 } from '@marketplace/proto';
import { createGrpcClient, type GrpcClient } from '@marketplace/rpc';
import { ClientError, Status } from 'nice-grpc-common';
import { decodeListingEvent } from '../src/adapters/listing-event.codec.js';
import { startListingService } from '../src/index.js';
import { IMAGE_SERVER_ALLOW_LIST, TestImages } from './support/test-images.js';

const {
  BULK_UPDATE_MODE_PRICE_SET: PRICE_SET,
  BULK_UPDATE_MODE_PRICE_PERCENT_INCREASE: PRICE_PERCENT_INCREASE,
  BULK_UPDATE_MODE_PRICE_PERCENT_DECREASE: PRICE_PERCENT_DECREASE,
  BULK_UPDATE_MODE_MOQ_SET: MOQ_SET,
} = listingV1.BulkUpdateMode;

const NOW = Date.UTC(2026, 8, 1, 12, 0, 0);
const SELLER = 7;
const OTHER_SELLER = 8;
const actorOf = (accountId: number) => ({ kind: 'seller', id: String(accountId) });
const ORDERS = { kind: 'system', id: 'order' };

/** The client of @marketplace/rpc raises AppErrors; the gRPC answer is their cause. */
const clientErrorOf = (error: unknown): ClientError => {
  const cause = error instanceof AppError ? error.cause : error;
  if (cause instanceof ClientError) return cause;
  throw error;
};

const statusOf = async (call: Promise<unknown>): Promise<Status | 'ok'> =>
  call.then(
    () => 'ok' as const,
    (error: unknown) => clientErrorOf(error).code,
  );

describe.each(testEngines())('listing changes and stock over gRPC on $name', ({ create }) => {
  const schema = freshSchemaName('listing_changes_test');
  const logSchema = freshSchemaName('eventlog_test');
  const published: DeliveredMessage[] = [];
  const clock = new ManualClock(NOW);
  let db: Database;
  let log: EventLog;
  let images: TestImages;
  let service: ServiceHandle;
  let grpc: GrpcClient<listingV1.ListingServiceDefinition>;

  beforeAll(async () => {
    db = await create();
    images = await TestImages.start();
    log = await createEmbeddedEventLog({ db, schema: logSchema });
    await log.consume({
      topic: 'marketplace.listing.v1',
      group: 'listing-changes-test',
      handler: async (batch) => {
        published.push(...batch.messages);
      },
    });
    service = await startListingService({
      db,
      log,
      logger: createLogger({ service: 'listing-changes-test' }),
      clock,
      grpc: { host: '127.0.0.1', port: 0 },
      schema,
      blobs: images.blobs,
      outboundAllowList: IMAGE_SERVER_ALLOW_LIST,
      mailer: createEmlMailer({
        directory: mkdtempSync(join(tmpdir(), 'listing-mail-')),
        from: 't@example.test',
      }),
    });
    grpc = createGrpcClient(listingV1.ListingServiceDefinition, service.address);
  }, 60_000);

  afterAll(async () => {
    grpc?.close();
    await service?.stop();
    await log?.close();
    await images?.stop();
    await dropSchema(db, schema);
    await dropSchema(db, logSchema);
    await db?.close();
  });

  const publish = async (draft: Partial<listingV1.ListingDraft> = {}): Promise<listingV1.Listing> => {
    const { listing } = await grpc.client.createListing({
      actor: actorOf(SELLER),
      sellerAccountId: SELLER,
      correlationId: '',
      draft: listingV1.ListingDraft.fromPartial({
        name: 'Pallet of USB-C chargers',
        description: '480 units',
        imageUrl: images.server.imageUrl('charger'),
        quantity: 480,
        priceCents: 1_000,
        ...draft,
      }),
    });
    if (!listing) throw new Error('no listing');
    return listing;
  };

  const update = (productId: string, changes: Partial<listingV1.ListingChanges>, seller = SELLER) =>
    grpc.client.updateListing({
      actor: actorOf(seller),
      sellerAccountId: seller,
      productId,
      changes: listingV1.ListingChanges.fromPartial(changes),
      correlationId: '',
    });

  const reserve = (productId: string, reservationId: string, quantity: number) =>
    grpc.client.reserveStock({ productId, reservationId, quantity, actor: ORDERS, correlationId: '' });

  it('changes only the fields sent, confirms availability, and publishes the whole listing', async () => {
    const created = await publish({ brand: 'Anker' });
    clock.advance(60_000);
    const { listing } = await update(created.productId, { priceCents: 850, name: 'Pallet of 65 W chargers' });
    expect(listing).toMatchObject({
      priceCents: 850,
      name: 'Pallet of 65 W chargers',
      brand: 'Anker',
      quantity: 480,
      createdAtMs: NOW,
      updatedAtMs: NOW + 60_000,
      confirmedAtMs: NOW + 60_000,
      version: 2,
    });
    const event = await eventually(() =>
      published.find(({ key, headers }) => key === created.productId && headers.ce_type?.endsWith('Updated')),
    );
    expect(decodeListingEvent(event.value).event).toMatchObject({
      type: 'ListingUpdated',
      data: { listing: { priceCents: 850 }, changedFields: ['name', 'price'] },
    });
  });

  it('takes what a create takes: stock, a new image re-hosted, the gallery replaced, no fetch when refused', async () => {
    const created = await publish({ galleryImageUrls: [images.server.imageUrl('side')] });
    const requestsBefore = images.server.requests();
    const { listing } = await update(created.productId, {
      quantity: 12,
      imageUrl: images.server.imageUrl('front-2'),
      galleryImageUrls: { urls: [] },
      priceCents: 990,
    });
    expect(images.server.requests()).toBe(requestsBefore + 1);
    expect(listing).toMatchObject({ quantity: 12, priceCents: 990, galleryImageUrls: [], version: 2 });
    expect(listing?.imageUrl).toMatch(/^\/images\/[0-9a-f]{64}\.png$/);
    expect(listing?.imageUrl).not.toBe(created.imageUrl);
    const refused = await statusOf(
      update(created.productId, { imageUrl: images.server.imageUrl('never'), minOrderQuantity: 0 }),
    );
    expect(refused).toBe(Status.INVALID_ARGUMENT);
    expect(images.server.requests()).toBe(requestsBefore + 1);
    const notAnImage = await update(created.productId, { imageUrl: images.server.notAnImageUrl }).catch(
      (error: unknown) => error,
    );
    expect((notAnImage as AppError).violations.map(({ path }) => path)).toEqual(['imageUrl']);
  });

  it('applies If-Match versions under the lock: a stale one fails with nothing changed', async () => {
    const created = await publish();
    const changePriceIfAt = (matchVersions: number[]) =>
      grpc.client
        .updateListing({
          actor: actorOf(SELLER),
          sellerAccountId: SELLER,
          productId: created.productId,
          changes: { priceCents: 1 },
          correlationId: '',
          matchVersions,
        })
        .catch((error: unknown) => error);
    const stale = await changePriceIfAt([7]);
    expect(clientErrorOf(stale).code).toBe(Status.FAILED_PRECONDITION);
    expect((stale as AppError).kind).toBe('precondition_failed');
    expect((stale as AppError).message).toBe(
      `listing ${created.productId} is at version 1, not 7: read it again and send its ETag, "1"`,
    );
    // The gateway's 0 (an If-Match of weak or malformed tags only) is no version the caller sent.
    const weak = await changePriceIfAt([0]);
    expect((weak as AppError).message).toBe(
      `listing ${created.productId} is at version 1, If-Match names no version (a weak or malformed tag never ` +
        'matches): read it again and send its ETag, "1"',
    );
    const current = await grpc.client.getListing({ productId: created.productId });
    expect(current.listing).toMatchObject({ priceCents: 1_000, version: 1 });
    const matched = await grpc.client.updateListing({
      actor: actorOf(SELLER),
      sellerAccountId: SELLER,
      productId: created.productId,
      changes: { priceCents: 2 },
      correlationId: '',
      matchVersions: [1],
    });
    expect(matched.listing).toMatchObject({ priceCents: 2, version: 2 });
    const staleQuantity = grpc.client.setQuantity({
      actor: actorOf(SELLER),
      sellerAccountId: SELLER,
      productId: created.productId,
      quantity: 3,
      correlationId: '',
      matchVersions: [1],
    });
    expect(await statusOf(staleQuantity)).toBe(Status.FAILED_PRECONDITION);
    // Another seller learns nothing from a version: not found as without one.
    const theirs = grpc.client.updateListing({
      actor: actorOf(OTHER_SELLER),
      sellerAccountId: OTHER_SELLER,
      productId: created.productId,
      changes: {},
      correlationId: '',
      matchVersions: [99],
    });
    expect(await statusOf(theirs)).toBe(Status.NOT_FOUND);
  });

  it('refuses invalid changes with every violation, and keeps the listing as it was', async () => {
    const created = await publish({ quantity: 10 });
    const refused = await update(created.productId, {
      priceCents: 0,
      category: 'spaceships',
      minOrderQuantity: 11,
      name: '   ',
    }).catch((error: unknown) => error);
    expect(refused).toBeInstanceOf(AppError);
    expect(clientErrorOf(refused).code).toBe(Status.INVALID_ARGUMENT);
    expect((refused as AppError).violations.map(({ path }) => path).sort()).toEqual([
      'category',
      'minOrderQuantity',
      'name',
      'price',
    ]);
    expect((await grpc.client.getListing({ productId: created.productId })).listing?.version).toBe(1);
  });

  it("answers NOT_FOUND for another seller's listing in the words of a missing one", async () => {
    const created = await publish();
    const theirs = await update(created.productId, { priceCents: 1 }, OTHER_SELLER).catch((e: unknown) => e);
    expect(clientErrorOf(theirs).code).toBe(Status.NOT_FOUND);
    expect((theirs as AppError).message).toBe(`listing ${created.productId} does not exist`);
    for (const call of [
      grpc.client.withdrawListing({
        actor: actorOf(OTHER_SELLER),
        sellerAccountId: OTHER_SELLER,
        productId: created.productId,
        correlationId: '',
      }),
      grpc.client.relistListing({
        actor: actorOf(OTHER_SELLER),
        sellerAccountId: OTHER_SELLER,
        productId: created.productId,
        correlationId: '',
      }),
      grpc.client.setQuantity({
        actor: actorOf(OTHER_SELLER),
        sellerAccountId: OTHER_SELLER,
        productId: created.productId,
        quantity: 0,
        correlationId: '',
      }),
    ]) {
      expect(await statusOf(call)).toBe(Status.NOT_FOUND);
    }
    expect((await grpc.client.getListing({ productId: created.productId })).listing?.version).toBe(1);
    expect(await statusOf(update('product_99999999', { priceCents: 1 }))).toBe(Status.NOT_FOUND);
    expect(await statusOf(update('nonsense', { priceCents: 1 }))).toBe(Status.NOT_FOUND);
    expect(await statusOf(grpc.client.getListing({ productId: 'product_99999999' }))).toBe(Status.NOT_FOUND);
  });

  it('fetches no image for a change it refuses: another seller’s listing, a missing one, a stale If-Match', async () => {
    const created = await publish();
    const requestsBefore = images.server.requests();
    const newImages = {
      imageUrl: images.server.imageUrl('not-fetched'),
      galleryImageUrls: { urls: [images.server.imageUrl('not-fetched-either')] },
    };
    const theirs = await update(created.productId, newImages, OTHER_SELLER).catch((e: unknown) => e);
    expect(clientErrorOf(theirs).code).toBe(Status.NOT_FOUND);
    expect((theirs as AppError).message).toBe(`listing ${created.productId} does not exist`);
    expect(await statusOf(update('product_99999999', newImages))).toBe(Status.NOT_FOUND);
    const stale = grpc.client.updateListing({
      actor: actorOf(SELLER),
      sellerAccountId: SELLER,
      productId: created.productId,
      changes: listingV1.ListingChanges.fromPartial(newImages),
      correlationId: '',
      matchVersions: [7],
    });
    expect(await statusOf(stale)).toBe(Status.FAILED_PRECONDITION);
    // The rules are checked on the listing as it stands: a minimum order above its stock fetches nothing either.
    const aboveStock = update(created.productId, { ...newImages, minOrderQuantity: created.quantity + 1 });
    expect(await statusOf(aboveStock)).toBe(Status.INVALID_ARGUMENT);
    expect(images.server.requests()).toBe(requestsBefore);
    expect((await grpc.client.getListing({ productId: created.productId })).listing?.version).toBe(1);
    // The seller's own current version fetches both.
    const { listing } = await grpc.client.updateListing({
      actor: actorOf(SELLER),
      sellerAccountId: SELLER,
      productId: created.productId,
      changes: listingV1.ListingChanges.fromPartial(newImages),
      correlationId: '',
      matchVersions: [1],
    });
    expect(listing?.version).toBe(2);
    expect(images.server.requests()).toBe(requestsBefore + 2);
  });

  it('sets freight terms, publishes ListingShippingSet, and names the field of bad terms', async () => {
    const created = await publish();
    const setShipping = (shipping: Partial<listingV1.ListingShipping>, seller = SELLER) =>
      grpc.client.setListingShipping({
        actor: actorOf(seller),
        sellerAccountId: seller,
        productId: created.productId,
        shipping: listingV1.ListingShipping.fromPartial(shipping),
        correlationId: '',
      });
    const { listing } = await setShipping({ mode: 'flat_per_order', cents: 15_000 });
    expect(listing).toMatchObject({
      shipping: { mode: 'flat_per_order', cents: 15_000 },
      version: 2,
      confirmedAtMs: created.confirmedAtMs,
    });
    expect((await grpc.client.getListing({ productId: created.productId })).listing?.shipping).toEqual({
      mode: 'flat_per_order',
      cents: 15_000,
    });
    expect((await setShipping({ mode: 'flat_per_order', cents: 15_000 })).listing?.version).toBe(2);
    const event = await eventually(() =>
      published.find(
        ({ key, headers }) => key === created.productId && headers.ce_type?.endsWith('ListingShippingSet'),
      ),
    );
    expect(decodeListingEvent(event.value).event).toMatchObject({
      type: 'ListingShippingSet',
      data: { listing: { shipping: { mode: 'flat_per_order', cents: 15_000 } } },
    });
    const refused = await setShipping({ mode: 'per_unit', cents: 0 }).catch((error: unknown) => error);
    expect(clientErrorOf(refused).code).toBe(Status.INVALID_ARGUMENT);
    expect((refused as AppError).violations.map(({ path }) => path)).toEqual(['cents']);
    expect(await statusOf(setShipping({ mode: 'included' }, OTHER_SELLER))).toBe(Status.NOT_FOUND);
  });

  it('applies If-Match to freight terms as to a PUT: a stale version fails with the terms kept', async () => {
    const created = await publish();
    const setShipping = (shipping: Partial<listingV1.ListingShipping>, matchVersions: number[]) =>
      grpc.client.setListingShipping({
        actor: actorOf(SELLER),
        sellerAccountId: SELLER,
        productId: created.productId,
        shipping: listingV1.ListingShipping.fromPartial(shipping),
        correlationId: '',
        matchVersions,
      });
    const first = await setShipping({ mode: 'per_unit', cents: 40 }, [1]);
    expect(first.listing).toMatchObject({ shipping: { mode: 'per_unit', cents: 40 }, version: 2 });
    // The version read before that change is stale now.
    const stale = await setShipping({ mode: 'included' }, [1]).catch((error: unknown) => error);
    expect(clientErrorOf(stale).code).toBe(Status.FAILED_PRECONDITION);
    expect((stale as AppError).kind).toBe('precondition_failed');
    expect((await grpc.client.getListing({ productId: created.productId })).listing).toMatchObject({
      shipping: { mode: 'per_unit', cents: 40 },
      version: 2,
    });
    expect((await setShipping({ mode: 'included' }, [2])).listing).toMatchObject({
      shipping: { mode: 'included' },
      version: 3,
    });
  });

  it('takes freight terms with a create and an update, under the rules of SetListingShipping', async () => {
    const created = await publish({ shipping: { mode: 'buyer_pickup', shipFromRegion: 'Reno, NV' } });
    expect(created.shipping).toEqual({ mode: 'buyer_pickup', shipFromRegion: 'Reno, NV' });
    const createdEvent = await eventually(() =>
      published.find(
        ({ key, headers }) => key === created.productId && headers.ce_type?.endsWith('ListingCreated'),
      ),
    );
    expect(decodeListingEvent(createdEvent.value).event).toMatchObject({
      type: 'ListingCreated',
      data: { listing: { shipping: { mode: 'buyer_pickup', shipFromRegion: 'Reno, NV' } } },
    });
    const { listing } = await update(created.productId, {
      priceCents: 900,
      shipping: { mode: 'flat_per_order', cents: 15_000 },
    });
    expect(listing).toMatchObject({ priceCents: 900, shipping: { mode: 'flat_per_order', cents: 15_000 } });
    const updatedEvent = await eventually(() =>
      published.find(
        ({ key, headers }) => key === created.productId && headers.ce_type?.endsWith('ListingUpdated'),
      ),
    );
    expect(decodeListingEvent(updatedEvent.value).event).toMatchObject({
      type: 'ListingUpdated',
      data: { changedFields: ['price', 'shipping'] },
    });
    // An update without terms keeps them.
    expect((await update(created.productId, { name: 'Renamed pallet' })).listing?.shipping).toEqual({
      mode: 'flat_per_order',
      cents: 15_000,
    });
    // Bad terms are refused with the other fields' violations, each under shipping/.
    const refusedCreate = await publish({ priceCents: 0, shipping: { mode: 'per_unit' } }).catch(
      (error: unknown) => error,
    );
    expect(clientErrorOf(refusedCreate).code).toBe(Status.INVALID_ARGUMENT);
    expect((refusedCreate as AppError).violations.map(({ path }) => path).sort()).toEqual([
      'price',
      'shipping/cents',
    ]);
    const refusedUpdate = await update(created.productId, {
      shipping: { mode: 'included', shipFromRegion: 'Reno, NV' },
    }).catch((error: unknown) => error);
    expect((refusedUpdate as AppError).violations).toEqual([
      { path: 'shipping/shipFromRegion', message: 'is not used by included' },
    ]);
    const unknownMode = await update(created.productId, { shipping: { mode: 'teleport' } }).catch(
      (error: unknown) => error,
    );
    expect((unknownMode as AppError).violations.map(({ path }) => path)).toEqual(['shipping/mode']);
    expect((await grpc.client.getListing({ productId: created.productId })).listing?.shipping).toEqual({
      mode: 'flat_per_order',
      cents: 15_000,
    });
  });

  it('lets exactly one of eight concurrent changes with the same If-Match win; the others are 412', async () => {
    const created = await publish();
    const change = (n: number) =>
      n % 2 === 0
        ? grpc.client.updateListing({
            actor: actorOf(SELLER),
            sellerAccountId: SELLER,
            productId: created.productId,
            changes: { priceCents: 100 + n },
            correlationId: '',
            matchVersions: [1],
          })
        : grpc.client.withdrawListing({
            actor: actorOf(SELLER),
            sellerAccountId: SELLER,
            productId: created.productId,
            correlationId: '',
            matchVersions: [1],
          });
    const outcomes = await Promise.all([0, 1, 2, 3, 4, 5, 6, 7].map((n) => statusOf(change(n))));
    expect(outcomes.filter((outcome) => outcome === 'ok')).toHaveLength(1);
    expect(outcomes.filter((outcome) => outcome === Status.FAILED_PRECONDITION)).toHaveLength(7);
    expect((await grpc.client.getListing({ productId: created.productId })).listing?.version).toBe(2);
  });

  it('never loses one of two concurrent updates', async () => {
    const created = await publish();
    await Promise.all([
      update(created.productId, { priceCents: 777 }),
      update(created.productId, { brand: 'Belkin' }),
      grpc.client.setQuantity({
        actor: actorOf(SELLER),
        sellerAccountId: SELLER,
        productId: created.productId,
        quantity: 12,
        correlationId: '',
      }),
    ]);
    const { listing } = await grpc.client.getListing({ productId: created.productId });
    expect(listing).toMatchObject({ priceCents: 777, brand: 'Belkin', quantity: 12, version: 4 });
  });

  it('sets the stock, 0 meaning sold out, as an availability confirmation', async () => {
    const created = await publish();
    clock.advance(1_000);
    const { listing } = await grpc.client.setQuantity({
      actor: actorOf(SELLER),
      sellerAccountId: SELLER,
      productId: created.productId,
      quantity: 0,
      correlationId: '',
    });
    expect(listing).toMatchObject({ quantity: 0, confirmedAtMs: clock.now() });
    const negative = grpc.client.setQuantity({
      actor: actorOf(SELLER),
      sellerAccountId: SELLER,
      productId: created.productId,
      quantity: -1,
      correlationId: '',
    });
    expect(await statusOf(negative)).toBe(Status.INVALID_ARGUMENT);
  });

  it('reserves 10 units of 50 concurrent one-unit reservations for the last 10, never below zero', async () => {
    const created = await publish({ quantity: 10 });
    const outcomes = await Promise.all(
      Array.from({ length: 50 }, (_, i) => statusOf(reserve(created.productId, `order-${i}`, 1))),
    );
    expect(outcomes.filter((outcome) => outcome === 'ok')).toHaveLength(10);
    expect(outcomes.filter((outcome) => outcome === Status.FAILED_PRECONDITION)).toHaveLength(40);
    const { listing } = await grpc.client.getListing({ productId: created.productId });
    expect(listing).toMatchObject({ quantity: 0, version: 11 });
  }, 30_000);

  it('reserves idempotently per reservation id, explains a shortage, and releases once', async () => {
    const created = await publish({ quantity: 5 });
    expect((await reserve(created.productId, 'order-1', 3)).listing?.quantity).toBe(2);
    expect((await reserve(created.productId, 'order-1', 3)).listing?.quantity).toBe(2);
    expect(await statusOf(reserve(created.productId, 'order-1', 4))).toBe(Status.ABORTED);
    const shortage = await reserve(created.productId, 'order-2', 3).catch((error: unknown) => error);
    expect(shortage).toMatchObject({
      kind: 'conflict',
      message: `${created.productId} has 2 units in stock: 3 cannot be reserved`,
    });
    expect(clientErrorOf(shortage).code).toBe(Status.FAILED_PRECONDITION);
    const release = () =>
      grpc.client.releaseStock({
        productId: created.productId,
        reservationId: 'order-1',
        actor: ORDERS,
        correlationId: '',
      });
    expect((await release()).listing?.quantity).toBe(5);
    expect((await release()).listing?.quantity).toBe(5);
    expect(
      (
        await grpc.client.releaseStock({
          productId: created.productId,
          reservationId: 'never',
          correlationId: '',
          actor: ORDERS,
        })
      ).listing?.version,
    ).toBe(3);
    expect(await statusOf(reserve(created.productId, 'order-1', 3))).toBe(Status.ABORTED);
    expect(await statusOf(reserve('product_99999999', 'order-9', 1))).toBe(Status.NOT_FOUND);
    expect(await statusOf(reserve(created.productId, 'order-9', 0))).toBe(Status.INVALID_ARGUMENT);
  });

  it("bulk-updates only the seller's own listings and reports the others untouched", async () => {
    const mine = [await publish({ priceCents: 1_000 }), await publish({ priceCents: 999, quantity: 3 })];
    const theirs = await grpc.client.createListing({
      actor: actorOf(OTHER_SELLER),
      sellerAccountId: OTHER_SELLER,
      correlationId: '',
      draft: listingV1.ListingDraft.fromPartial({
        name: 'Other pallet',
        description: 'theirs',
        imageUrl: images.server.imageUrl('charger'),
        priceCents: 500,
      }),
    });
    const theirId = theirs.listing!.productId;
    const ids = [...mine.map(({ productId }) => productId), theirId, 'product_99999999'];
    const increase = await grpc.client.bulkUpdateListings({
      actor: actorOf(SELLER),
      sellerAccountId: SELLER,
      productIds: ids,
      mode: PRICE_PERCENT_INCREASE,
      value: 10,
      correlationId: '',
    });
    expect(increase.updated.map(({ priceCents }) => priceCents)).toEqual([1_100, 1_099]);
    expect(increase.failures).toEqual([
      { productId: theirId, reason: 'not_found', message: `listing ${theirId} does not exist` },
      {
        productId: 'product_99999999',
        reason: 'not_found',
        message: 'listing product_99999999 does not exist',
      },
    ]);
    expect((await grpc.client.getListing({ productId: theirId })).listing).toMatchObject({
      priceCents: 500,
      version: 1,
    });

    const moq = await grpc.client.bulkUpdateListings({
      actor: actorOf(SELLER),
      sellerAccountId: SELLER,
      productIds: mine.map(({ productId }) => productId),
      mode: MOQ_SET,
      value: 5,
      correlationId: '',
    });
    expect(moq.updated.map(({ minOrderQuantity }) => minOrderQuantity)).toEqual([5]);
    expect(moq.failures).toEqual([
      {
        productId: mine[1]!.productId,
        reason: 'invalid',
        message: 'invalid listing: minOrderQuantity must not exceed the 3 units in stock',
      },
    ]);

    const bulk = (mode: listingV1.BulkUpdateMode, value: number, productIds = [mine[0]!.productId]) =>
      grpc.client.bulkUpdateListings({
        actor: actorOf(SELLER),
        sellerAccountId: SELLER,
        productIds,
        mode,
        value,
        correlationId: '',
      });
    expect((await bulk(PRICE_SET, 4_200)).updated[0]?.priceCents).toBe(4_200);
    expect((await bulk(PRICE_PERCENT_DECREASE, 50)).updated[0]?.priceCents).toBe(2_100);
    for (const [mode, value] of [
      [PRICE_SET, 0.5],
      [PRICE_PERCENT_DECREASE, 100],
      [PRICE_PERCENT_INCREASE, 0],
      [MOQ_SET, 0],
      // No mode (as a sender of the old string field 4 is read) or one this version does not know.
      [listingV1.BulkUpdateMode.BULK_UPDATE_MODE_UNSPECIFIED, 2],
      [99 as listingV1.BulkUpdateMode, 2],
    ] as const) {
      expect(await statusOf(bulk(mode, value))).toBe(Status.INVALID_ARGUMENT);
    }
    expect(await statusOf(bulk(PRICE_SET, 100, []))).toBe(Status.INVALID_ARGUMENT);
    const tooMany = Array.from({ length: 201 }, (_, i) => `product_${i + 1}`);
    expect(await statusOf(bulk(PRICE_SET, 100, tooMany))).toBe(Status.INVALID_ARGUMENT);
  }, 30_000);
});

/** Waits, a bounded time, until `find` returns something. */
const eventually = async <T>(find: () => T | undefined, timeoutMs = 10_000): Promise<T> => {
  const giveUpAt = Date.now() + timeoutMs;
  for (;;) {
    const found = find();
    if (found !== undefined) return found;
    if (Date.now() > giveUpAt) throw new Error(`nothing found within ${timeoutMs} ms`);
    await sleep(20);
  }
};

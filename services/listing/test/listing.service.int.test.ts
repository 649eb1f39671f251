import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { setTimeout as sleep } from 'node:timers/promises';
import type { Database } from '@marketplace/database';
import { dropSchema, freshSchemaName, testEngines } from '@marketplace/database/testing';
import type { DeliveredMessage, EventLog } from '@marketplace/eventlog';
import { createEmbeddedEventLog } from '@marketplace/eventlog';
import type { ServiceHandle } from '@marketplace/platform';
import { AppError, createLogger, ManualClock } from '@marketplace/platform';
import { listingV1 } from '@marketplace/proto';
import type { GrpcClient } from '@marketplace/rpc';
import { createGrpcClient } from '@marketplace/rpc';
import { ClientError, Metadata, Status } from 'nice-grpc-common';
import { decodeListingEvent } from '../src/adapters/listing-event.codec.js';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createEmlMailer } from '@marketplace/mailer';
import { startListingService } from '../src/index.js';
import { IMAGE_SERVER_ALLOW_LIST, TestImages } from './support/test-images.js';

const NOW = Date.UTC(2026, 8, 1, 12, 0, 0);
const SELLER = { kind: 'seller', id: '7' };
const TRACEPARENT = '00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01';
let images: TestImages;

const request = (draft: Partial<listingV1.ListingDraft>): listingV1.CreateListingRequest => ({
  actor: SELLER,
  sellerAccountId: 7,
  correlationId: 'req-1',
  draft: listingV1.ListingDraft.fromPartial({
    name: 'Pallet of USB-C chargers',
    description: '480 units',
    imageUrl: images.server.imageUrl('charger'),
    ...draft,
  }),
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

describe.each(testEngines())('listing service over gRPC on $name', ({ create }) => {
  const schema = freshSchemaName('listing_test');
  const logSchema = freshSchemaName('eventlog_test');
  const published: DeliveredMessage[] = [];
  let db: Database;
  let log: EventLog;
  let service: ServiceHandle;
  let grpc: GrpcClient<listingV1.ListingServiceDefinition>;

  beforeAll(async () => {
    db = await create();
    images = await TestImages.start();
    log = await createEmbeddedEventLog({ db, schema: logSchema });
    await log.consume({
      topic: 'marketplace.listing.v1',
      group: 'listing-test',
      handler: async (batch) => {
        published.push(...batch.messages);
      },
    });
    service = await startListingService({
      db,
      log,
      logger: createLogger({ service: 'listing-test' }),
      clock: new ManualClock(NOW),
      grpc: { host: '127.0.0.1', port: 0 },
      schema,
      blobs: images.blobs,
      outboundAllowList: IMAGE_SERVER_ALLOW_LIST,
      mailer: createEmlMailer({
        directory: mkdtempSync(join(tmpdir(), 'listing-mail-')),
        from: 'test@example.test',
      }),
    });
    grpc = createGrpcClient(listingV1.ListingServiceDefinition, service.address);
  });

  afterAll(async () => {
    grpc.close();
    await service.stop();
    await log.close();
    await images.stop();
    await dropSchema(db, schema);
    await dropSchema(db, logSchema);
    await db.close();
  });

  it('is ready once started, on an ephemeral loopback port', () => {
    expect(service.isReady()).toBe(true);
    expect(service.address).toMatch(/^127\.0\.0\.1:[1-9][0-9]*$/);
  });

  it('creates a listing with the defaults and returns it at version 1', async () => {
    const { listing } = await grpc.client.createListing(request({ condition: 'overstock' }));
    expect(listing).toEqual({
      productId: expect.stringMatching(/^product_[1-9][0-9]*$/),
      sellerAccountId: 7,
      name: 'Pallet of USB-C chargers',
      description: '480 units',
      imagePlaceholder: false,
      sku: listing?.productId.replace('product_', 'SKU-'),
      category: 'electronics',
      condition: 'overstock',
      priceCents: 100,
      currency: 'USD',
      quantity: 1,
      minOrderQuantity: 1,
      minQuoteQuantity: 1,
      brand: '',
      imageUrl: expect.stringMatching(/^\/images\/[0-9a-f]{64}\.png$/),
      galleryImageUrls: [],
      promotePublicly: false,
      originalRetailPriceCents: undefined,
      instantCheckout: false,
      createdAtMs: NOW,
      updatedAtMs: NOW,
      confirmedAtMs: NOW,
      version: 1,
    });
  });

  it('publishes ListingCreated to marketplace.listing.v1, keyed by the product id, as protobuf', async () => {
    const { listing } = await grpc.client.createListing(request({ sku: 'CHG-65', promotePublicly: true }), {
      metadata: Metadata({ traceparent: TRACEPARENT }),
    });
    const productId = listing!.productId;
    const message = await eventually(() => published.find(({ key }) => key === productId));

    expect(message.headers).toMatchObject({
      ce_type: 'marketplace.listing.v1.ListingCreated',
      ce_source: '/services/listing',
      ce_subject: productId,
      'content-type': 'application/protobuf',
      traceparent: TRACEPARENT,
    });
    const decoded = decodeListingEvent(message.value);
    expect(decoded).toMatchObject({ streamId: productId, version: 1, actor: SELLER, correlationId: 'req-1' });
    expect(decoded.event.data.listing).toMatchObject({ productId, sku: 'CHG-65', promotePublicly: true });
    expect(message.headers['ce_id']).toBe(decoded.eventId);
  });

  it('answers an invalid draft with INVALID_ARGUMENT whose violations reach the client as an AppError', async () => {
    const attempt = grpc.client.createListing(
      request({ name: '', galleryImageUrls: ['https://a.example/1.jpg', 'nope'] }),
    );
    const error = await attempt.catch((rejection: unknown) => rejection);
    expect(error).toBeInstanceOf(AppError);
    expect((error as AppError).cause).toBeInstanceOf(ClientError);
    expect((error as AppError).cause).toMatchObject({ code: Status.INVALID_ARGUMENT });
    expect(error).toMatchObject({
      kind: 'validation',
      violations: [
        { path: 'name', message: 'is required' },
        { path: 'galleryImageUrls/1', message: 'must be an absolute http or https URL' },
      ],
    });
  });

  it('creates once per idempotency key: a repeat answers the listing, another draft is ALREADY_EXISTS', async () => {
    const keyed = { ...request({ name: 'Keyed pallet' }), idempotencyKey: 'grpc-key-1' };
    const first = await grpc.client.createListing(keyed);
    const again = await grpc.client.createListing({ ...keyed, correlationId: 'req-2' });
    expect(again.listing?.productId).toBe(first.listing?.productId);
    const error = await grpc.client
      .createListing({ ...request({ name: 'Another pallet' }), idempotencyKey: 'grpc-key-1' })
      .catch((rejection: unknown) => rejection);
    expect(error).toMatchObject({ kind: 'idempotency_conflict' });
    expect((error as AppError).cause).toMatchObject({ code: Status.ALREADY_EXISTS });
  });

  it('refuses a request without an actor', async () => {
    await expect(grpc.client.createListing({ ...request({}), actor: undefined })).rejects.toMatchObject({
      kind: 'validation',
      violations: [{ path: 'actor', message: 'is required' }],
    });
  });

  it('refuses a seller command for another seller’s account than the authenticated actor’s', async () => {
    const { listing } = await grpc.client.createListing(request({ priceCents: 5_000 }));
    const productId = listing!.productId;
    const otherSeller = { kind: 'seller', id: '8' };
    await expect(
      grpc.client.updateListing({
        actor: otherSeller,
        sellerAccountId: 7,
        productId,
        correlationId: 'req-3',
        changes: { priceCents: 1 },
      }),
    ).rejects.toMatchObject({ kind: 'forbidden' });
    await expect(grpc.client.createListing({ ...request({}), actor: otherSeller })).rejects.toMatchObject({
      kind: 'forbidden',
    });
    const { listing: unchanged } = await grpc.client.getListing({ productId });
    expect(unchanged).toMatchObject({ sellerAccountId: 7, priceCents: 5_000 });
  });

  it('stops: no longer ready, no longer answering', async () => {
    await service.stop();
    expect(service.isReady()).toBe(false);
    await expect(grpc.client.createListing(request({}))).rejects.toMatchObject({ kind: 'unavailable' });
  });
});

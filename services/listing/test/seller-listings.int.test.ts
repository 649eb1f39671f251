import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Database } from '@marketplace/database';
import { dropSchema, freshSchemaName, testEngines } from '@marketplace/database/testing';
import type { EventLog } from '@marketplace/eventlog';
import { createEmbeddedEventLog } from '@marketplace/eventlog';
import { createEmlMailer } from '@marketplace/mailer';
import type { ServiceHandle } from '@marketplace/platform';
import { AppError, createLogger, ManualClock } from '@marketplace/platform';
import { listingV1 } from '@marketplace/proto';
import { createGrpcClient, type GrpcClient } from '@marketplace/rpc';
import { sellerListingsFromEventsMigration } from '../src/adapters/seller-listings.table.js';
import { startListingService } from '../src/index.js';
import { IMAGE_SERVER_ALLOW_LIST, TestImages } from './support/test-images.js';

const NOW = Date.UTC(2026, 8, 1, 12, 0, 0);
const SELLER = 17;
const OTHER_SELLER = 18;
const actorOf = (accountId: number) => ({ kind: 'seller', id: String(accountId) });

describe.each(testEngines())('ListSellerListings on $name', ({ create }) => {
  const schema = freshSchemaName('seller_listings_test');
  const logSchema = freshSchemaName('eventlog_test');
  const clock = new ManualClock(NOW);
  let db: Database;
  let log: EventLog;
  let images: TestImages;
  let service: ServiceHandle;
  let grpc: GrpcClient<listingV1.ListingServiceDefinition>;
  const mine: string[] = [];
  let theirs: string;

  const publish = async (seller: number, draft: Partial<listingV1.ListingDraft>): Promise<string> => {
    const { listing } = await grpc.client.createListing({
      actor: actorOf(seller),
      sellerAccountId: seller,
      correlationId: '',
      draft: listingV1.ListingDraft.fromPartial({
        name: 'Pallet of USB-C chargers',
        description: '480 units',
        imageUrl: images.server.imageUrl('charger'),
        quantity: 480,
        ...draft,
      }),
    });
    if (!listing) throw new Error('no listing');
    clock.advance(1_000);
    return listing.productId;
  };

  const list = (request: Partial<listingV1.ListSellerListingsRequest> = {}, seller = SELLER) =>
    grpc.client.listSellerListings(
      listingV1.ListSellerListingsRequest.fromPartial({
        actor: actorOf(seller),
        sellerAccountId: seller,
        limit: 50,
        ...request,
      }),
    );

  beforeAll(async () => {
    db = await create();
    images = await TestImages.start();
    log = await createEmbeddedEventLog({ db, schema: logSchema });
    service = await startListingService({
      db,
      log,
      logger: createLogger({ service: 'seller-listings-test' }),
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
    mine.push(await publish(SELLER, { sku: 'A-1', category: 'electronics', promotePublicly: true }));
    mine.push(await publish(SELLER, { sku: 'A-2', category: 'tools' }));
    mine.push(await publish(SELLER, { sku: 'A-3', category: 'electronics' }));
    mine.push(await publish(SELLER, { sku: 'A-4', category: 'tools', promotePublicly: true }));
    mine.push(await publish(SELLER, { sku: 'A-5', category: 'electronics' }));
    theirs = await publish(OTHER_SELLER, { sku: 'A-1', category: 'electronics', promotePublicly: true });
    // Read-your-writes: each append wrote its listing's row in the same statement.
    expect((await list()).total).toBe(mine.length);
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

  it('pages through exactly the seller’s own listings, oldest change first, with the total', async () => {
    const seen: string[] = [];
    let cursor = '';
    let pages = 0;
    do {
      const page = await list({ limit: 2, cursor });
      expect(page.total).toBe(5);
      expect(page.listings.length).toBeLessThanOrEqual(2);
      seen.push(...page.listings.map((listing) => listing.productId));
      cursor = page.nextCursor;
      pages += 1;
    } while (cursor !== '');
    expect(pages).toBe(3);
    expect(seen).toEqual(mine);
    expect(seen).not.toContain(theirs);
    const other = await list({}, OTHER_SELLER);
    expect(other.listings.map((listing) => listing.productId)).toEqual([theirs]);
  });

  it('filters by status, visibility, category, sku and updated_since', async () => {
    const [first, second, third] = mine as [string, string, string];
    await grpc.client.setQuantity({
      actor: actorOf(SELLER),
      sellerAccountId: SELLER,
      productId: second,
      quantity: 0,
      correlationId: '',
    });
    const soldOut = await list({ status: 'sold_out' });
    expect(soldOut.listings.map((listing) => listing.productId)).toEqual([second]);
    expect((await list({ status: 'active' })).total).toBe(4);
    expect((await list({ visibility: 'public' })).listings.map((l) => l.productId)).toEqual([first, mine[3]]);
    expect((await list({ visibility: 'private' })).total).toBe(3);
    expect((await list({ category: 'tools' })).listings.map((l) => l.productId).sort()).toEqual(
      [second, mine[3]].sort(),
    );
    expect((await list({ sku: 'A-3' })).listings.map((l) => l.productId)).toEqual([third]);
    expect((await list({ sku: 'A-3', category: 'tools' })).total).toBe(0);
    clock.advance(1_000);
    const since = clock.now();
    await grpc.client.updateListing({
      actor: actorOf(SELLER),
      sellerAccountId: SELLER,
      productId: first,
      changes: { priceCents: 999 },
      correlationId: '',
    });
    const changed = await list({ updatedSinceMs: since });
    expect(changed.total).toBe(1);
    expect(changed.listings[0]).toMatchObject({ productId: first, priceCents: 999, version: 2 });
    // A changed listing moves to the end of the list: a sync paging through it sees it again.
    expect((await list()).listings.map((listing) => listing.productId).at(-1)).toBe(first);
  });

  it('refuses bad filters naming each one, and another seller’s account', async () => {
    const refused = await list({
      status: 'gone',
      visibility: 'secret',
      category: 'cars',
      cursor: '!!',
      limit: 201,
    }).then(
      () => undefined,
      (error: unknown) => error,
    );
    expect(refused).toBeInstanceOf(AppError);
    expect((refused as AppError).kind).toBe('validation');
    expect((refused as AppError).violations.map((violation) => violation.path).sort()).toEqual([
      'category',
      'cursor',
      'limit',
      'status',
      'visibility',
    ]);
    const impostor = await grpc.client
      .listSellerListings({ actor: actorOf(OTHER_SELLER), sellerAccountId: SELLER, limit: 10 })
      .then(
        () => undefined,
        (error: unknown) => error,
      );
    expect((impostor as AppError).kind).toBe('forbidden');
  });

  it('rebuilds rows the list lacks or holds at an older version from the event store (the upgrade from the projection)', async () => {
    const [, , , fourth, fifth] = mine as [string, string, string, string, string];
    await grpc.client.withdrawListing({
      actor: actorOf(SELLER),
      sellerAccountId: SELLER,
      productId: fifth,
      correlationId: '',
    });
    const before = (await list()).listings;
    await db.query(`DELETE FROM ${schema}.seller_listings WHERE product_id = $1`, [fourth]);
    await db.query(
      `UPDATE ${schema}.seller_listings SET version = 1, status = 'active' WHERE product_id = $1`,
      [fifth],
    );
    await db.query(sellerListingsFromEventsMigration.sql(schema));
    expect((await list()).listings).toEqual(before);
    expect((await list({ status: 'withdrawn' })).listings.map((listing) => listing.productId)).toEqual([
      fifth,
    ]);
  });
});

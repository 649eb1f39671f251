import { publicBaseUrlOf } from '@marketplace/platform';
import type { BlobStore } from '@marketplace/blobstore';
import { migrate } from '@marketplace/database';
import {
  createPostgresEventStore,
  IDEMPOTENCY_KEY_PURGE_INTERVAL_MS,
  IdempotencyKeys,
  startOutboxRelay,
} from '@marketplace/eventsourcing';
import type { Mailer } from '@marketplace/mailer';
import { createGuardedFetcher } from '@marketplace/outbound-http';
import type { ServiceHandle } from '@marketplace/platform';
import type { ServiceDependencies } from '@marketplace/runtime';
import { schedulePeriodicJob } from '@marketplace/runtime';
import { OutgoingMailTable, startOutgoingMailWorker } from '@marketplace/outgoing-mail';
import { serveGrpcService } from '@marketplace/rpc';
import { ImageLibraryTable } from './adapters/image-library.table.js';
import { IMAGE_LIBRARY_CATCH_UP_MS, RecentImageLibrary } from './adapters/recent-image-library.js';
import { listingMigrations } from './adapters/listing.migrations.js';
import { loadPlaceholderImages } from './adapters/placeholder-images.js';
import { encodeListingEvent } from './adapters/listing-event.codec.js';
import { productNumberSequence } from './adapters/product-number.sequence.js';
import { startStalenessProjections } from './adapters/staleness.projections.js';
import { SellerListingsTable } from './adapters/seller-listings.table.js';
import { listSellerListings } from './application/list-seller-listings.js';
import { StalenessTables } from './adapters/staleness.tables.js';
import type { ListingDependencies } from './application/create-listing.js';
import { createListing } from './application/create-listing.js';
import type { ImageFetchLimits } from './application/host-images.js';
import { IMAGE_FETCH_LIMITS } from './application/host-images.js';
import type { ListingWriteDependencies } from './application/change-listing.js';
import {
  bulkUpdateListings,
  getListing,
  relistListing,
  releaseStock,
  withdrawListing,
  reserveStock,
  setListingShipping,
  setQuantity,
  updateListing,
} from './application/change-listing.js';
import { listingStreamLock } from './adapters/listing-stream.lock.js';
import { sellerSkuLock } from './adapters/seller-sku.lock.js';
import { BulkUpsertAnswersTable } from './adapters/bulk-upsert-answers.table.js';
import { bulkUpsertListings } from './application/bulk-upsert.js';
import { runStalenessCheck, scheduleStalenessCheck } from './application/staleness.js';
import { LISTING_STALENESS } from '@marketplace/vocabulary';
import { listingGrpcService } from './transport/listing.grpc.js';

const SERVICE_NAME = 'listing';

export interface ListingServiceOptions extends ServiceDependencies {
  /** The PostgreSQL schema the service owns; default `listing` (tests use a fresh one). */
  readonly schema?: string;
  /** Where re-hosted listing images are stored (the gateway serves them from the same store). */
  readonly blobs: BlobStore;
  /** Hosts and CIDRs image fetches may reach although not public (`OUTBOUND_ALLOW_HOSTS`). */
  readonly outboundAllowList?: { readonly hosts?: readonly string[]; readonly cidrs?: readonly string[] };
  /** Bounds of image fetches, tests shorten them; default OUTBOUND_LIMITS' timeout and IMAGE_FETCH_LIMITS. */
  readonly imageFetch?: Partial<ImageFetchLimits> & { readonly timeoutMs?: number };
  /** Sends the staleness reminders (queued, then sent by the outgoing-mail worker). */
  readonly mailer: Mailer;
  /** `{base_url}` of the listing links in emails; default `http://localhost:8080`. */
  readonly publicBaseUrl?: string | undefined;
  /** How often the staleness check runs; default hourly. */
  readonly stalenessCheckIntervalMs?: number;
}

/**
 * Starts the listing service: brings its schema up to date, starts the outbox relay, the staleness projections
 * and schedule, the purge of expired idempotency keys, then serves gRPC. `stop()` drains in reverse order: in-flight calls finish, then the relay
 * publishes what they appended, then the staleness work stops.
 */
export const startListingService = async (options: ListingServiceOptions): Promise<ServiceHandle> => {
  const { db, log, clock } = options;
  const logger = options.logger.child({ service: SERVICE_NAME });
  const schema = options.schema ?? SERVICE_NAME;

  await migrate(db, schema, listingMigrations);
  const fetcher = createGuardedFetcher({
    allowList: options.outboundAllowList,
    ...(options.imageFetch?.timeoutMs === undefined ? {} : { timeoutMs: options.imageFetch.timeoutMs }),
  });
  const imageLibrary = new ImageLibraryTable(schema);
  const recentImages = new RecentImageLibrary(imageLibrary);
  await recentImages.load(db);
  const placeholders = await loadPlaceholderImages(options.blobs);
  const sellerListings = new SellerListingsTable(schema);
  const deps: ListingDependencies = {
    db,
    clock,
    store: createPostgresEventStore({ db, schema }),
    allocateProductNumber: productNumberSequence(schema),
    images: {
      fetcher,
      blobs: options.blobs,
      findLibraryImage: async (category, words) => recentImages.mostSimilar(category, words),
      placeholderImage: (category) => placeholders.get(category),
      fetchLimits: { ...IMAGE_FETCH_LIMITS, ...options.imageFetch },
    },
    imageLibrary,
    recentImages,
    idempotencyKeys: new IdempotencyKeys(db, schema, clock),
    sellerListings,
  };
  const writes: ListingWriteDependencies = { ...deps, lockStream: listingStreamLock(schema) };
  const bulkAnswers = new BulkUpsertAnswersTable(schema, clock);
  const stalenessTables = new StalenessTables(schema);
  const projections = await startStalenessProjections({ log, db, schema, tables: stalenessTables });
  const outgoingMail = new OutgoingMailTable(schema);
  const mailWorker = startOutgoingMailWorker({
    db,
    table: outgoingMail,
    mailer: options.mailer,
    clock,
    logger,
  });
  const staleness = scheduleStalenessCheck(
    async () => {
      const queued = await runStalenessCheck({
        db,
        tables: stalenessTables,
        outgoingMail,
        clock,
        publicBaseUrl: publicBaseUrlOf(options.publicBaseUrl),
      });
      if (queued > 0) mailWorker.wake();
      return queued;
    },
    { intervalMs: options.stalenessCheckIntervalMs ?? LISTING_STALENESS.checkIntervalMs, logger },
  );
  // Other replicas' listings reach this one's library from the table.
  const libraryCatchUp = schedulePeriodicJob('image-library-catch-up', () => recentImages.catchUp(db), {
    intervalMs: IMAGE_LIBRARY_CATCH_UP_MS,
    logger,
  });
  const keyPurge = schedulePeriodicJob(
    'idempotency-key-purge',
    async () => (await deps.idempotencyKeys.purgeExpired()) + (await bulkAnswers.purgeExpired(db)),
    {
      intervalMs: IDEMPOTENCY_KEY_PURGE_INTERVAL_MS,
      logger,
    },
  );
  const stopBackgroundWork = async (): Promise<void> => {
    await relay.stop();
    await staleness.stop();
    await mailWorker.stop();
    await keyPurge.stop();
    await libraryCatchUp.stop();
    await Promise.all(projections.map((projection) => projection.close()));
    await fetcher.close();
  };
  const relay = startOutboxRelay({
    db,
    schema,
    log,
    name: SERVICE_NAME,
    encode: encodeListingEvent,
    batchIntervalMs: options.relayBatchIntervalMs,
    logger,
  });
  // The server drains first so the relay publishes whatever in-flight calls appended.
  return serveGrpcService({
    host: options.grpc.host,
    port: options.grpc.port,
    services: [
      listingGrpcService({
        createListing: (input) => createListing(deps, input),
        getListing: (productId) => getListing(writes, productId),
        updateListing: (input) => updateListing(writes, input),
        setQuantity: (input) => setQuantity(writes, input),
        bulkUpdateListings: (input) => bulkUpdateListings(writes, input),
        reserveStock: (input) => reserveStock(writes, input),
        releaseStock: (input) => releaseStock(writes, input),
        withdrawListing: (input) => withdrawListing(writes, input),
        relistListing: (input) => relistListing(writes, input),
        setListingShipping: (input) => setListingShipping(writes, input),
        bulkUpsertListings: (input) =>
          bulkUpsertListings(
            { ...deps, ...writes, sellerListings, bulkAnswers, lockSkus: sellerSkuLock(schema) },
            input,
          ),
        listSellerListings: (sellerAccountId, filter) =>
          listSellerListings({ db, sellerListings }, sellerAccountId, filter),
      }),
    ],
    logger,
    serviceName: SERVICE_NAME,
    afterServerStopped: stopBackgroundWork,
  }).catch(async (error: unknown) => {
    await stopBackgroundWork();
    throw error;
  });
};

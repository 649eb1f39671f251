import { migrate } from '@marketplace/database';
import { createPostgresEventStore, startOutboxRelay } from '@marketplace/eventsourcing';
import type { ServiceHandle } from '@marketplace/platform';
import type { ServiceDependencies } from '@marketplace/runtime';
import { serveGrpcService } from '@marketplace/rpc';
import { listingMigrations } from './adapters/listing.migrations.js';
import { encodeListingEvent } from './adapters/listing-event.codec.js';
import { productNumberSequence } from './adapters/product-number.sequence.js';
import type { ListingDependencies } from './application/create-listing.js';
import { createListing } from './application/create-listing.js';
import { listingGrpcService } from './transport/listing.grpc.js';

const SERVICE_NAME = 'listing';

export interface ListingServiceOptions extends ServiceDependencies {
  /** The PostgreSQL schema the service owns; default `listing` (tests use a fresh one). */
  readonly schema?: string;
}

/**
 * Starts the listing service: brings its schema up to date, starts the outbox relay, then serves gRPC.
 * `stop()` drains in reverse order: in-flight calls finish, then the relay publishes what they appended.
 */
export const startListingService = async (options: ListingServiceOptions): Promise<ServiceHandle> => {
  const { db, log, clock } = options;
  const logger = options.logger.child({ service: SERVICE_NAME });
  const schema = options.schema ?? SERVICE_NAME;

  await migrate(db, schema, listingMigrations);
  const deps: ListingDependencies = {
    db,
    clock,
    store: createPostgresEventStore({ db, schema }),
    allocateProductNumber: productNumberSequence(schema),
  };
  const relay = startOutboxRelay({ db, schema, log, name: SERVICE_NAME, encode: encodeListingEvent, logger });
  // The server drains first so the relay publishes whatever in-flight calls appended.
  return serveGrpcService({
    host: options.grpc.host,
    port: options.grpc.port,
    services: [listingGrpcService({ createListing: (input) => createListing(deps, input) })],
    logger,
    serviceName: SERVICE_NAME,
    afterServerStopped: () => relay.stop(),
  }).catch(async (error: unknown) => {
    await relay.stop();
    throw error;
  });
};

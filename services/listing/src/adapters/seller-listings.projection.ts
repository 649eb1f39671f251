import type { Database } from '@marketplace/database';
import type { EventLog, LogConsumer } from '@marketplace/eventlog';
import { startProjection } from '@marketplace/eventsourcing';
import { decodeListingEvent } from './listing-event.codec.js';
import type { SellerListingsTable } from './seller-listings.table.js';
import { LISTING_TOPIC } from './staleness.projections.js';

/**
 * Keeps `seller_listings` from this service's own listing events, through the log like any consumer (the write
 * path stays as it is). Every event carries the whole listing, so a backlog of one listing costs one write.
 */
export const startSellerListingsProjection = (options: {
  readonly log: EventLog;
  readonly db: Database;
  readonly schema: string;
  readonly table: SellerListingsTable;
}): Promise<LogConsumer> =>
  startProjection({
    log: options.log,
    db: options.db,
    schema: options.schema,
    topic: LISTING_TOPIC,
    group: 'listing-seller-listings',
    decode: (message) => decodeListingEvent(message.value),
    supersedes: () => true,
    apply: async (tx, decoded) => {
      await options.table.record(tx, decoded.event.data.listing, decoded.version);
    },
  });

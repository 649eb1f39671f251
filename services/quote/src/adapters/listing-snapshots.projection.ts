import type { Database } from '@marketplace/database';
import type { EventLog, LogConsumer } from '@marketplace/eventlog';
import { startProjection } from '@marketplace/eventsourcing';
import { listingV1 } from '@marketplace/proto';
import type { ListingSnapshot } from '../application/quote.dependencies.js';
import type { ListingSnapshotsTable } from './listing-snapshots.table.js';

export const LISTING_TOPIC = 'marketplace.listing.v1';

/**
 * The listing a listing event leaves behind: every listing event is state-carrying. Undefined for an event kind
 * this version does not know (its listing arrives again with the next event it knows).
 */
const listingOf = (event: listingV1.ListingEvent): listingV1.Listing | undefined =>
  event.payload?.value.listing;

/** Keeps `listing_snapshots` up to date; idempotent (event ids recorded, newest version wins). */
export const startListingSnapshotsProjection = (options: {
  readonly log: EventLog;
  readonly db: Database;
  readonly schema: string;
  readonly table: ListingSnapshotsTable;
}): Promise<LogConsumer> =>
  startProjection({
    log: options.log,
    db: options.db,
    schema: options.schema,
    topic: LISTING_TOPIC,
    group: 'quote-listing-snapshots',
    decode: (message) => listingV1.ListingEvent.decode(message.value),
    // A listing event's listing replaces the snapshot: only a product's last one in a batch is written.
    supersedes: (event) => listingOf(event) !== undefined,
    // The batch's listings are written in one statement, however many the batch holds.
    applyBatch: (tx, events) =>
      options.table.upsertMany(
        tx,
        events.flatMap(({ event }) => {
          const listing = listingOf(event);
          return listing === undefined ? [] : [snapshotOf(listing, event.version)];
        }),
      ),
  });

const snapshotOf = (listing: listingV1.Listing, version: number): ListingSnapshot => ({
  productId: listing.productId,
  sellerAccountId: listing.sellerAccountId,
  name: listing.name,
  priceCents: listing.priceCents,
  currency: listing.currency,
  quantity: listing.quantity,
  // New quote requests see a withdrawn listing as in-app only; open ones are kept.
  promotePublicly: listing.promotePublicly && listing.withdrawnAtMs === undefined,
  version,
  shipping: listing.shipping
    ? {
        mode: listing.shipping.mode,
        cents: listing.shipping.cents,
        shipFromRegion: listing.shipping.shipFromRegion,
      }
    : null,
});

import { randomUUID } from 'node:crypto';
import type { EventLog } from '@marketplace/eventlog';
import { listingV1 } from '@marketplace/proto';

/** What a bench's listing is made of; the rest is what a seller's plain public listing has. */
export interface VersionedListing {
  readonly productId: string;
  readonly sellerAccountId: number;
  readonly name: string;
  readonly description: string;
  readonly category: string;
  readonly condition: string;
  readonly priceCents: number;
  readonly quantity: number;
  readonly brand?: string;
}

/**
 * Publishes `ListingCreated` for `listing` on `marketplace.listing.v1` as the listing service's relay does after
 * its commit (version 1, created now, promoted publicly), for benches that create listings faster than the
 * listing service can on this machine.
 */
export const publishListingCreated = async (log: EventLog, listing: VersionedListing): Promise<void> => {
  const now = Date.now();
  const value = listingV1.ListingEvent.encode({
    eventId: randomUUID(),
    productId: listing.productId,
    version: 1,
    occurredAtMs: now,
    actor: { kind: 'seller', id: String(listing.sellerAccountId) },
    correlationId: '',
    payload: {
      $case: 'created',
      value: {
        listing: listingV1.Listing.fromPartial({
          ...listing,
          currency: 'USD',
          minOrderQuantity: 1,
          promotePublicly: true,
          createdAtMs: now,
          updatedAtMs: now,
          confirmedAtMs: now,
          version: 1,
        }),
      },
    },
  }).finish();
  await log.publish('marketplace.listing.v1', [
    { key: listing.productId, value, headers: { ce_id: randomUUID() } },
  ]);
};

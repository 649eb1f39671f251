import type { Database, Transaction } from '@marketplace/database';
import type { Actor, EventStore } from '@marketplace/eventsourcing';
import { handleCommand } from '@marketplace/eventsourcing';
import type { Clock } from '@marketplace/platform';
import { formatProductId } from '@marketplace/platform';
import type { ListingDraft } from '../domain/listing.commands.js';
import { listingDecider } from '../domain/listing.decider.js';
import type { Listing } from '../domain/listing.events.js';

/** The stream type of listings: selects the topic `marketplace.listing.v1`. */
export const LISTING_STREAM_TYPE = 'listing';

/** Takes the next product number inside the caller's transaction. */
export type AllocateProductNumber = (tx: Transaction) => Promise<number>;

export interface ListingDependencies {
  readonly db: Database;
  readonly store: EventStore;
  readonly clock: Clock;
  readonly allocateProductNumber: AllocateProductNumber;
}

export interface CreateListingInput {
  readonly sellerAccountId: number;
  readonly draft: ListingDraft;
  readonly actor: Actor;
  readonly correlationId?: string;
  readonly traceparent?: string;
}

export interface CreatedListing {
  readonly listing: Listing;
  /** The listing stream's version: the expected version of the listing's next command. */
  readonly version: number;
}

/**
 * Creates a listing under a new product number. Allocation and append share one transaction, so a listing
 * exists exactly when its ListingCreated does; a rejected draft only leaves a gap in the product numbers, which
 * are unique, not dense.
 */
export const createListing = (
  deps: ListingDependencies,
  input: CreateListingInput,
): Promise<CreatedListing> =>
  deps.db.transaction(async (tx) => {
    const productId = formatProductId(await deps.allocateProductNumber(tx));
    const { state, version } = await handleCommand({
      store: deps.store,
      decider: listingDecider,
      streamId: productId,
      streamType: LISTING_STREAM_TYPE,
      tx,
      command: {
        type: 'CreateListing',
        data: { productId, sellerAccountId: input.sellerAccountId, draft: input.draft },
        metadata: {
          now: deps.clock.now(),
          actor: input.actor,
          correlationId: input.correlationId,
          traceparent: input.traceparent,
        },
      },
    });
    if (state.status !== 'listed') throw new Error(`CreateListing left ${productId} without a listing`);
    return { listing: state.listing, version };
  });

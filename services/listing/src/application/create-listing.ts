import type { Database, Transaction } from '@marketplace/database';
import type { Actor, EventStore } from '@marketplace/eventsourcing';
import { handleCommand } from '@marketplace/eventsourcing';
import type { Clock } from '@marketplace/platform';
import { formatProductId } from '@marketplace/platform';
import type { ImageLibraryTable } from '../adapters/image-library.table.js';
import type { ListingDraft } from '../domain/listing.commands.js';
import { titleWords } from '../domain/listing-images.js';
import { listingDecider } from '../domain/listing.decider.js';
import type { Listing } from '../domain/listing.events.js';
import { validateNewListing } from '../domain/listing.rules.js';
import type { ImageHostingDependencies } from './host-images.js';
import { hostListingImages } from './host-images.js';

/** The stream type of listings: selects the topic `marketplace.listing.v1`. */
export const LISTING_STREAM_TYPE = 'listing';

/** Takes the next product number inside the caller's transaction. */
export type AllocateProductNumber = (tx: Transaction) => Promise<number>;

export interface ListingDependencies {
  readonly db: Database;
  readonly store: EventStore;
  readonly clock: Clock;
  readonly allocateProductNumber: AllocateProductNumber;
  readonly images: ImageHostingDependencies;
  /** Learns the images sellers send, for listings sent without one. */
  readonly imageLibrary: ImageLibraryTable;
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
 * Creates a listing under a new product number. The images are re-hosted first, outside any transaction (a
 * fetch may take seconds), and only for a draft the rules accept. Allocation, append and the image library
 * share one transaction, so a listing exists exactly when its ListingCreated does; a rejected draft only leaves
 * a gap in the product numbers, which are unique, not dense.
 */
export const createListing = async (
  deps: ListingDependencies,
  input: CreateListingInput,
): Promise<CreatedListing> => {
  const accepted = validateNewListing(input.sellerAccountId, input.draft);
  const hostedImages = await hostListingImages(deps.images, accepted);
  return deps.db.transaction(async (tx) => {
    const productId = formatProductId(await deps.allocateProductNumber(tx));
    const { state, version } = await handleCommand({
      store: deps.store,
      decider: listingDecider,
      streamId: productId,
      streamType: LISTING_STREAM_TYPE,
      tx,
      command: {
        type: 'CreateListing',
        data: { productId, sellerAccountId: input.sellerAccountId, draft: input.draft, hostedImages },
        metadata: {
          now: deps.clock.now(),
          actor: input.actor,
          correlationId: input.correlationId,
          traceparent: input.traceparent,
        },
      },
    });
    if (state.status !== 'listed') throw new Error(`CreateListing left ${productId} without a listing`);
    const { listing } = state;
    // Only images a seller sent teach the library; a borrowed one is already in it.
    if (accepted.imageUrl !== undefined && listing.imageUrl !== undefined) {
      await deps.imageLibrary.add(tx, {
        productId,
        category: listing.category,
        titleWords: titleWords(listing.name),
        imagePath: listing.imageUrl,
        addedAtMs: listing.createdAt,
      });
    }
    return { listing, version };
  });
};

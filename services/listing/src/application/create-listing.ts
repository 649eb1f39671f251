import type { Database, Queryable, Transaction } from '@marketplace/database';
import type { Actor, EventStore, IdempotencyKeys, RecordIdempotencyKey } from '@marketplace/eventsourcing';
import { fold, idempotencyScopeOf, idempotentRequestOf } from '@marketplace/eventsourcing';
import type { Clock } from '@marketplace/platform';
import { formatProductId } from '@marketplace/platform';
import type { ListingDraft } from '../domain/listing.commands.js';
import { titleWords } from '../domain/listing-images.js';
import type { ListingState } from '../domain/listing.decider.js';
import { listingDecider } from '../domain/listing.decider.js';
import type { Listing, ListingEvent } from '../domain/listing.events.js';
import type { ValidNewListing } from '../domain/listing.rules.js';
import { validateNewListing } from '../domain/listing.rules.js';
import type { ImageHostingDependencies } from './host-images.js';
import { hostListingImages } from './host-images.js';
import type { SellerListingRows } from './list-seller-listings.js';

/** The stream type of listings: selects the topic `marketplace.listing.v1`. */
export const LISTING_STREAM_TYPE = 'listing';

/** Takes the next product number (a sequence: never rolled back, so no transaction is needed). */
export type AllocateProductNumber = (q: Queryable) => Promise<number>;

/** An image a seller sent, kept by the library for listings of its category sent without one. */
export interface ImageLibraryEntry {
  readonly productId: string;
  readonly category: string;
  readonly titleWords: readonly string[];
  readonly imagePath: string;
  readonly addedAtMs: number;
}

/** The library's durable record, written in the listing's transaction. */
export interface ImageLibraryRecord {
  add(q: Queryable, entry: ImageLibraryEntry): Promise<void>;
}

/** The library as publications read it. */
export interface RecentImages {
  remember(entry: ImageLibraryEntry): void;
}

export interface ListingDependencies {
  readonly db: Database;
  readonly store: EventStore;
  readonly clock: Clock;
  readonly allocateProductNumber: AllocateProductNumber;
  readonly images: ImageHostingDependencies;
  /** Learns the images sellers send, for listings sent without one: the table, in the listing's transaction. */
  readonly imageLibrary: ImageLibraryRecord;
  /** The library as publications read it (in memory), told of each image once its listing committed. */
  readonly recentImages: RecentImages;
  /** The keys of the listings created with an idempotency key (`<schema>.idempotency_keys`). */
  readonly idempotencyKeys: IdempotencyKeys;
  /** The seller's list of their listings, written with each append. */
  readonly sellerListings: SellerListingRows;
}

export interface CreateListingInput {
  readonly sellerAccountId: number;
  readonly draft: ListingDraft;
  readonly actor: Actor;
  readonly correlationId?: string;
  readonly traceparent?: string;
  /** The client's key: a repeat with the same draft answers the listing it created (docs/idempotency.md). */
  readonly idempotencyKey?: string | undefined;
}

export interface VersionedListing {
  readonly listing: Listing;
  /** The listing stream's version: the expected version of the listing's next command. */
  readonly version: number;
}

/** A listing's stream folded into its state, with the stream's version (0: no stream). */
export const readListingState = async (
  store: EventStore,
  productId: string,
  tx?: Transaction,
): Promise<{ state: ListingState; version: number }> => {
  const stream = await store.readStream<ListingEvent>(productId, tx);
  const state = fold(
    listingDecider,
    stream.events.map(({ type, data }) => ({ type, data }) as ListingEvent),
  );
  return { state, version: stream.version };
};

/**
 * Creates a listing, once per idempotency key when the seller sends one: a repeat of the same draft with the
 * same key answers the listing as it is now, without fetching its images again; another draft with that key is
 * an idempotency conflict. A draft the rules refuse records nothing.
 */
export const createListing = async (
  deps: ListingDependencies,
  input: CreateListingInput,
): Promise<VersionedListing> => {
  const accepted = validateNewListing(input.sellerAccountId, input.draft);
  const idempotent = idempotentRequestOf(input.idempotencyKey, {
    path: 'idempotency_key',
    scope: idempotencyScopeOf({ accountId: input.sellerAccountId }),
    operation: 'CreateListing',
    request: { sellerAccountId: input.sellerAccountId, draft: input.draft },
  });
  return deps.idempotencyKeys.createOnce(idempotent, {
    create: (recordKey) => publishListing(deps, input, accepted, recordKey),
    replay: async (productId) => {
      const { state, version } = await readListingState(deps.store, productId);
      if (state.status !== 'listed') throw new Error(`idempotency key of ${productId}, which has no listing`);
      return { listing: state.listing, version };
    },
  });
};

/**
 * Publishes a listing under a new product number, in as few round trips as the listing needs (publishing is the
 * marketplace's hottest write, measured by bench/ publish-throughput):
 * - the images are re-hosted first, outside any transaction (a fetch may take seconds), only for a draft the
 *   rules accept;
 * - the product number comes from the sequence on its own, taken in blocks (nextval never rolls back anyway: a
 *   rejected or failed listing only leaves a gap, and numbers are unique, not dense);
 * - a fresh number has no stream, so there is nothing to read: the decider decides on the initial state and the
 *   append expects `no_stream` (a number handed out twice would still be refused by the store);
 * - the append alone is one statement, atomic without a transaction; a listing whose seller sent an image also
 *   teaches the image library, and a listing with an idempotency key records it: then the writes share a
 *   transaction.
 */
const publishListing = async (
  deps: ListingDependencies,
  input: CreateListingInput,
  accepted: ValidNewListing,
  recordKey: RecordIdempotencyKey | undefined,
): Promise<VersionedListing> => {
  const hostedImages = await hostListingImages(deps.images, accepted);
  const productId = formatProductId(await deps.allocateProductNumber(deps.db));
  const now = deps.clock.now();
  const decided = listingDecider.decide(
    {
      type: 'CreateListing',
      data: { productId, accepted, hostedImages },
      metadata: { now, actor: input.actor },
    },
    listingDecider.initialState(),
  );
  const state = fold(listingDecider, decided);
  if (state.status !== 'listed') throw new Error(`CreateListing left ${productId} without a listing`);
  const { listing } = state;
  const append = (tx?: Transaction) =>
    deps.store.append(
      {
        streamId: productId,
        streamType: LISTING_STREAM_TYPE,
        expectedVersion: 'no_stream',
        events: decided,
        metadata: { actor: input.actor, correlationId: input.correlationId, traceparent: input.traceparent },
        now,
        companion: deps.sellerListings.rowOf({ listing, version: 1 }),
      },
      tx,
    );
  // Only images a seller sent teach the library; a borrowed one is already in it.
  const learnsImage = accepted.imageUrl !== undefined && listing.imageUrl !== undefined;
  if (!learnsImage && recordKey === undefined) {
    await append();
    return { listing, version: 1 };
  }
  const learned = {
    productId,
    category: listing.category,
    titleWords: titleWords(listing.name),
    imagePath: listing.imageUrl ?? '',
    addedAtMs: listing.createdAt,
  };
  await deps.db.transaction(async (tx) => {
    await recordKey?.(tx, productId);
    await append(tx);
    if (learnsImage) await deps.imageLibrary.add(tx, learned);
  });
  if (learnsImage) deps.recentImages.remember(learned);
  return { listing, version: 1 };
};

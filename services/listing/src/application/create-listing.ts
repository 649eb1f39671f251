import type { Database, Queryable, Transaction } from '@marketplace/database';
import type {
  Actor,
  CompanionWrite,
  EventStore,
  IdempotencyKeys,
  IdempotentRequest,
  RecordIdempotencyKey,
} from '@marketplace/eventsourcing';
import {
  fold,
  IdempotencyKeysTaken,
  idempotencyScopeOf,
  idempotentRequestOf,
} from '@marketplace/eventsourcing';
import type { Clock } from '@marketplace/platform';
import { formatProductId } from '@marketplace/platform';
import type { HostedImages, ListingDraft } from '../domain/listing.commands.js';
import { titleWords } from '../domain/listing-images.js';
import type { ListingState } from '../domain/listing.decider.js';
import { listingDecider } from '../domain/listing.decider.js';
import type { Listing, ListingEvent } from '../domain/listing.events.js';
import type { ValidNewListing } from '../domain/listing.rules.js';
import { validateNewListing } from '../domain/listing.rules.js';
import type { ImageBudget, ImageHostingDependencies } from './host-images.js';
import { hostListingImages, startImageBudget } from './host-images.js';
import type { SellerListingRows, SellerListingsByProductId } from './list-seller-listings.js';

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

/** The library's durable record, written with the listing's events. */
export interface ImageLibraryRecord {
  /** The entry as a companion of its listing's append (one statement for both). */
  rowOf(entry: ImageLibraryEntry): CompanionWrite;
  /** `add` for the listings of a batch, in one statement. */
  addMany(q: Queryable, entries: readonly ImageLibraryEntry[]): Promise<void>;
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
  /** Learns the images sellers send, for listings sent without one: the table, written with the listing. */
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
 * The keyed request of one create, the same for a single create and an item of a bulk call: a key sent to one
 * replays on the other.
 */
const createListingRequestOf = (
  sellerAccountId: number,
  draft: CreateListingInput['draft'],
  idempotencyKey: string | undefined,
) =>
  idempotentRequestOf(idempotencyKey, {
    path: 'idempotency_key',
    scope: idempotencyScopeOf({ accountId: sellerAccountId }),
    operation: 'CreateListing',
    request: { sellerAccountId, draft },
  });

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
  const idempotent = createListingRequestOf(input.sellerAccountId, input.draft, input.idempotencyKey);
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
 * - the append is one statement, atomic without a transaction, which also writes the seller's row and, for a
 *   listing whose seller sent an image, the image library's row (companion writes); a listing with an
 *   idempotency key records it too: then the key and the append share a transaction.
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
  const { decided, listing } = decideNewListing({
    productId,
    accepted,
    hostedImages,
    now,
    actor: input.actor,
  });
  const learned = learnedImageOf(accepted, listing);
  const sellerRow = deps.sellerListings.rowOf({ listing, version: 1 });
  const append = (tx?: Transaction) =>
    deps.store.append(
      {
        streamId: productId,
        streamType: LISTING_STREAM_TYPE,
        expectedVersion: 'no_stream',
        events: decided,
        metadata: { actor: input.actor, correlationId: input.correlationId, traceparent: input.traceparent },
        now,
        companion: learned === undefined ? sellerRow : [sellerRow, deps.imageLibrary.rowOf(learned)],
      },
      tx,
    );
  if (recordKey === undefined) await append();
  else
    await deps.db.transaction(async (tx) => {
      await recordKey(tx, productId);
      await append(tx);
    });
  if (learned !== undefined) deps.recentImages.remember(learned);
  return { listing, version: 1 };
};

/** A new listing's events, decided on the initial state (a fresh product number has no stream). */
const decideNewListing = (input: {
  readonly productId: string;
  readonly accepted: ValidNewListing;
  readonly hostedImages: HostedImages;
  readonly now: number;
  readonly actor: Actor;
}): { decided: readonly ListingEvent[]; listing: Listing } => {
  const { productId, accepted, hostedImages, now, actor } = input;
  const decided = listingDecider.decide(
    { type: 'CreateListing', data: { productId, accepted, hostedImages }, metadata: { now, actor } },
    listingDecider.initialState(),
  );
  const state = fold(listingDecider, decided);
  if (state.status !== 'listed') throw new Error(`CreateListing left ${productId} without a listing`);
  return { decided, listing: state.listing };
};

/** The library's entry for a listing whose seller sent an image; a borrowed one is already in it. */
const learnedImageOf = (accepted: ValidNewListing, listing: Listing): ImageLibraryEntry | undefined =>
  accepted.imageUrl !== undefined && listing.imageUrl !== undefined
    ? {
        productId: listing.productId,
        category: listing.category,
        titleWords: titleWords(listing.name),
        imagePath: listing.imageUrl,
        addedAtMs: listing.createdAt,
      }
    : undefined;

/** One item of a batch of creates (a bulk upsert's creates): its place in the request and its draft. */
export interface BatchCreateItem {
  readonly index: number;
  readonly draft: ListingDraft;
  /** The item's own key (derived from the call's, docs/idempotency.md); undefined when the call has none. */
  readonly idempotencyKey?: string | undefined;
}

/** What one item of a batch came to: its listing, or the error that refused it alone. */
export type BatchCreateOutcome =
  | { readonly index: number; readonly created: VersionedListing }
  | { readonly index: number; readonly error: unknown };

export interface BatchCreateDependencies extends ListingDependencies {
  readonly sellerListings: SellerListingRows & SellerListingsByProductId;
}

export interface CreateListingsInput {
  readonly sellerAccountId: number;
  readonly items: readonly BatchCreateItem[];
  readonly actor: Actor;
  readonly correlationId?: string;
  readonly traceparent?: string;
  /**
   * Runs in each group's transaction before its append (a bulk upsert by sku): answers the items that must not
   * be created after all, each with the error that refuses it (a concurrent call created its sku by now).
   */
  readonly claim?: ClaimCreates;
  /** The call's budget for images, shared with its updates (a bulk upsert); default one for this batch. */
  readonly imageBudget?: ImageBudget;
}

/** See `CreateListingsInput.claim`: the errors of the items of `items` not to create, by index. */
export type ClaimCreates = (
  tx: Transaction,
  items: readonly BatchCreateItem[],
) => Promise<ReadonlyMap<number, unknown>>;

/**
 * How many listings one transaction of a batch creates. Each transaction costs a fixed few statements (the
 * keys, the append with the seller's rows, the image library, the commit), so larger groups are cheaper per
 * listing; smaller ones hold the database (on the embedded engine, the process's one thread) for less at a time,
 * so other requests get their turn between them (docs/architecture.md, "Embedded mode: PGlite and the event loop").
 */
export const CREATES_PER_TRANSACTION = 100;
/** Keys a concurrent twin of the call recorded first are looked up again this often before giving up. */
const KEY_RACE_ATTEMPTS = 3;

interface PendingCreate {
  readonly item: BatchCreateItem;
  readonly accepted: ValidNewListing;
  readonly key: IdempotentRequest | undefined;
}

interface DecidedCreate extends PendingCreate {
  readonly productId: string;
  readonly decided: readonly ListingEvent[];
  readonly listing: Listing;
  readonly learned: ImageLibraryEntry | undefined;
}

/**
 * Creates a batch of listings, each as `createListing` would, but in a few transactions rather than one per
 * listing (docs/specification.md, "Bulk upsert"): each item is checked by the rules on its own; keyed items seen
 * before answer the listing they created (one lookup for the batch); the images of the rest are fetched with no
 * transaction open, as many at once and for as long as the call's image budget allows; then each group of
 * CREATES_PER_TRANSACTION listings is appended by one multi-stream append, with the seller's rows in its
 * statement and the keys and image library in its transaction. An item the rules or its images refuse is that
 * item's error alone. Answers in the order of `items`.
 */
export const createListings = async (
  deps: BatchCreateDependencies,
  input: CreateListingsInput,
): Promise<BatchCreateOutcome[]> => {
  const outcomes = new Map<number, BatchCreateOutcome>();
  const pending: PendingCreate[] = [];
  for (const item of input.items) {
    try {
      const accepted = validateNewListing(input.sellerAccountId, item.draft);
      const key = createListingRequestOf(input.sellerAccountId, item.draft, item.idempotencyKey);
      pending.push({ item, accepted, key });
    } catch (error) {
      outcomes.set(item.index, { index: item.index, error });
    }
  }
  // Checked before the images are fetched, so a repeated call skips the slow part.
  const unseen = await replaySeen(deps, pending, outcomes);
  const imageBudget = input.imageBudget ?? startImageBudget(deps.images);
  // The budget bounds the fetches in flight (docs/specification.md, "Bulk upsert"), so every item asks at once.
  const hosted = await Promise.all(
    unseen.map(async (create) => {
      try {
        return { create, hostedImages: await hostListingImages(deps.images, create.accepted, imageBudget) };
      } catch (error) {
        outcomes.set(create.item.index, { index: create.item.index, error });
        return undefined;
      }
    }),
  );
  const now = deps.clock.now();
  const decided: DecidedCreate[] = [];
  for (const entry of hosted) {
    if (entry === undefined) continue;
    const productId = formatProductId(await deps.allocateProductNumber(deps.db));
    const { decided: events, listing } = decideNewListing({
      productId,
      accepted: entry.create.accepted,
      hostedImages: entry.hostedImages,
      now,
      actor: input.actor,
    });
    decided.push({
      ...entry.create,
      productId,
      decided: events,
      listing,
      learned: learnedImageOf(entry.create.accepted, listing),
    });
  }
  for (let start = 0; start < decided.length; start += CREATES_PER_TRANSACTION) {
    await appendGroup(deps, input, decided.slice(start, start + CREATES_PER_TRANSACTION), outcomes);
  }
  return input.items.map(
    (item) => outcomes.get(item.index) ?? { index: item.index, error: new Error(`item ${item.index} lost`) },
  );
};

/**
 * Answers the keyed items whose key created a listing before (the listing as it is now) and refuses those whose
 * key was used for another request; answers the rest, still to create.
 */
const replaySeen = async <T extends PendingCreate>(
  deps: BatchCreateDependencies,
  creates: readonly T[],
  outcomes: Map<number, BatchCreateOutcome>,
): Promise<T[]> => {
  const keyed = creates.filter((create) => create.key !== undefined);
  if (keyed.length === 0) return [...creates];
  const found = await deps.idempotencyKeys.findMany(
    deps.db,
    keyed.map((create) => create.key as IdempotentRequest),
  );
  const earlier = new Map<number, string>();
  keyed.forEach((create, at) => {
    const answer = found[at];
    if (typeof answer === 'string') earlier.set(create.item.index, answer);
    else if (answer !== undefined)
      outcomes.set(create.item.index, { index: create.item.index, error: answer });
  });
  if (earlier.size > 0) {
    const rows = await deps.sellerListings.byProductIds(deps.db, [...earlier.values()]);
    for (const [index, productId] of earlier) {
      const row = rows.get(productId);
      if (row === undefined) throw new Error(`idempotency key of ${productId}, which has no listing`);
      outcomes.set(index, { index, created: row });
    }
  }
  return creates.filter((create) => !outcomes.has(create.item.index));
};

/**
 * One transaction of a batch: the keys, the events of every listing with the seller's rows, the image library.
 * When a concurrent twin of the call recorded some keys first, the transaction rolls back and the group is
 * looked up again: those items answer the twin's listings, the rest are appended anew.
 */
const appendGroup = async (
  deps: BatchCreateDependencies,
  input: CreateListingsInput,
  group: readonly DecidedCreate[],
  outcomes: Map<number, BatchCreateOutcome>,
): Promise<void> => {
  let creates: readonly DecidedCreate[] = group;
  for (let attempt = 1; creates.length > 0; attempt++) {
    try {
      if (input.claim === undefined && !needsTransaction(creates))
        await deps.store.appendMany(requestOf(deps, input, creates));
      else {
        creates = await deps.db.transaction(async (tx) => {
          const refused =
            input.claim === undefined
              ? new Map<number, unknown>()
              : await input.claim(
                  tx,
                  creates.map(({ item }) => item),
                );
          for (const [index, error] of refused) outcomes.set(index, { index, error });
          const kept = creates.filter(({ item }) => !refused.has(item.index));
          if (kept.length === 0) return kept;
          await deps.idempotencyKeys.recordMany(tx, keysOf(kept));
          await deps.store.appendMany(requestOf(deps, input, kept), tx);
          const learned = learnedOf(kept);
          if (learned.length > 0) await deps.imageLibrary.addMany(tx, learned);
          return kept;
        });
      }
    } catch (error) {
      if (!(error instanceof IdempotencyKeysTaken) || attempt >= KEY_RACE_ATTEMPTS) throw error;
      creates = await replaySeen(deps, creates, outcomes);
      continue;
    }
    for (const entry of learnedOf(creates)) deps.recentImages.remember(entry);
    for (const { item, listing } of creates)
      outcomes.set(item.index, { index: item.index, created: { listing, version: 1 } });
    return;
  }
};

const keysOf = (creates: readonly DecidedCreate[]) =>
  creates.flatMap(({ key, productId }) => (key === undefined ? [] : [{ request: key, streamId: productId }]));

const learnedOf = (creates: readonly DecidedCreate[]): ImageLibraryEntry[] =>
  creates.flatMap(({ learned }) => (learned === undefined ? [] : [learned]));

/** Keys and the image library are written with the append, in one transaction; a bare append needs none. */
const needsTransaction = (creates: readonly DecidedCreate[]): boolean =>
  keysOf(creates).length > 0 || learnedOf(creates).length > 0;

/** One multi-stream append of the creates, the seller's rows in its statement. */
const requestOf = (
  deps: BatchCreateDependencies,
  input: CreateListingsInput,
  creates: readonly DecidedCreate[],
) => ({
  streams: creates.map((create) => ({
    streamId: create.productId,
    streamType: LISTING_STREAM_TYPE,
    expectedVersion: 'no_stream' as const,
    events: create.decided,
    metadata: { actor: input.actor, correlationId: input.correlationId, traceparent: input.traceparent },
    now: create.listing.createdAt,
  })),
  companion: deps.sellerListings.rowsOf(creates.map(({ listing }) => ({ listing, version: 1 }))),
});

/** Runs `work` on every element, at most `limit` at a time, keeping the order of `elements` in the results. */
export const mapInPool = async <T, R>(
  elements: readonly T[],
  limit: number,
  work: (element: T) => Promise<R>,
): Promise<R[]> => {
  const results = new Array<R>(elements.length);
  let next = 0;
  const worker = async (): Promise<void> => {
    while (next < elements.length) {
      const at = next++;
      results[at] = await work(elements[at] as T);
    }
  };
  await Promise.all(Array.from({ length: Math.min(limit, elements.length) }, worker));
  return results;
};

import type { Transaction } from '@marketplace/database';
import type { CommandContext } from '@marketplace/eventsourcing';
import { handleCommand } from '@marketplace/eventsourcing';
import type { AppError } from '@marketplace/platform';
import {
  isAppError,
  notFound,
  parseProductId,
  preconditionFailed,
  validationError,
} from '@marketplace/platform';
import type { BulkUpdateMode } from '@marketplace/vocabulary';
import { BULK_UPDATE_LIMITS, BULK_UPDATE_MODES } from '@marketplace/vocabulary';
import type {
  HostedImages,
  ListingChanges,
  ListingCommand,
  ShippingDraft,
} from '../domain/listing.commands.js';
import type { ListingState } from '../domain/listing.decider.js';
import { listingDecider } from '../domain/listing.decider.js';
import { bulkChangesOf, checkBulkValue } from '../domain/listing.rules.js';
import type { ImageBudget } from './host-images.js';
import { hostChangedImages } from './host-images.js';
import type { ListingDependencies, VersionedListing } from './create-listing.js';
import { LISTING_STREAM_TYPE, readListingState } from './create-listing.js';

/** Serialises the writers of one listing's stream inside their transaction (a PostgreSQL advisory lock). */
export type LockListingStream = (tx: Transaction, productId: string) => Promise<void>;

export type ListingWriteDependencies = Pick<
  ListingDependencies,
  'db' | 'store' | 'clock' | 'images' | 'sellerListings'
> & {
  readonly lockStream: LockListingStream;
};

/**
 * The expected version still guards every append; the lock makes a conflict rare (a writer that does not lock),
 * and a conflict re-reads and decides again, so two concurrent updates never lose one.
 */
const CONFLICT_RETRIES = 3;

type ExistingListingCommand = Exclude<ListingCommand, { type: 'CreateListing' }>;
type CommandOf<T extends ExistingListingCommand['type']> = Extract<ExistingListingCommand, { type: T }>;

const knownProductId = (productId: string): string => {
  if (parseProductId(productId) === undefined) throw notFound(`listing ${productId} does not exist`);
  return productId;
};

const readState = (deps: ListingWriteDependencies, productId: string, tx?: Transaction) =>
  readListingState(deps.store, productId, tx);

/** The listing as it stands; not_found when there is none. */
export const getListing = async (
  deps: ListingWriteDependencies,
  productId: string,
): Promise<VersionedListing> => {
  const { state, version } = await readState(deps, knownProductId(productId));
  if (state.status !== 'listed') throw notFound(`listing ${productId} does not exist`);
  return { listing: state.listing, version };
};

/**
 * Handles one command on an existing listing in its own transaction, under the stream's lock. `commandFor`
 * sees the state read under that lock (a bulk percentage needs the current price).
 */
const handleOnListing = async <T extends ExistingListingCommand['type']>(
  deps: ListingWriteDependencies,
  productId: string,
  commandFor: (state: ListingState) => CommandOf<T>,
  precondition?: Precondition,
  appendsOnlyChanges = false,
): Promise<VersionedListing & { readonly changed: boolean }> =>
  deps.db.transaction(async (tx) => {
    await deps.lockStream(tx, productId);
    const { state: before, version: versionBefore } = await readState(deps, productId, tx);
    precondition?.(before, versionBefore);
    const command = commandFor(before);
    if (appendsOnlyChanges && before.status === 'listed' && changesNothing(command, before)) {
      return { listing: before.listing, version: versionBefore, changed: false };
    }
    const { state, version } = await handleCommand({
      store: deps.store,
      decider: listingDecider,
      streamId: productId,
      streamType: LISTING_STREAM_TYPE,
      tx,
      command,
      retryOnConflict: CONFLICT_RETRIES,
      companion: ({ state: decided, version: decidedVersion }) => {
        // Every listing command keeps a listing (a withdrawal marks it): an append without one is a bug.
        if (decided.status !== 'listed') throw new Error(`${productId} has events but no listing`);
        return deps.sellerListings.rowOf({ listing: decided.listing, version: decidedVersion });
      },
    });
    if (state.status !== 'listed') throw notFound(`listing ${productId} does not exist`);
    return { listing: state.listing, version, changed: true };
  });

/** An update whose every field already holds the value sent (its event would name no changed field). */
const changesNothing = (command: ExistingListingCommand, state: ListingState): boolean => {
  if (command.type !== 'UpdateListing') return false;
  return listingDecider
    .decide(command, state)
    .every((event) => event.type === 'ListingUpdated' && event.data.changedFields.length === 0);
};

/** Checks the state read under the stream's lock before the command is decided. */
type Precondition = (state: ListingState, version: number) => void;

/**
 * If-Match (RFC 9110): the seller's own listing must be at one of the versions the caller read, else 412 and
 * nothing changes. Absent or another seller's listing is left to the decider (404 both), so a stale version
 * never tells anyone more than that would.
 */
const versionIn = (
  sellerAccountId: number,
  matchVersions: readonly number[] | undefined,
): Precondition | undefined =>
  matchVersions === undefined || matchVersions.length === 0
    ? undefined
    : (state, version) => {
        if (state.status !== 'listed' || state.listing.sellerAccountId !== sellerAccountId) return;
        if (!matchVersions.includes(version)) {
          // Versions start at 1: the gateway sends 0 for an If-Match of only weak or malformed tags.
          const named = matchVersions.filter((matchVersion) => matchVersion > 0);
          const sent =
            named.length === 0
              ? 'If-Match names no version (a weak or malformed tag never matches)'
              : `not ${named.join(' or ')}`;
          throw preconditionFailed(
            `listing ${state.listing.productId} is at version ${version}, ${sent}: read it again and send its ` +
              `ETag, "${version}"`,
          );
        }
      };

const metadataOf = (deps: ListingWriteDependencies, context: CommandContext) => ({
  now: deps.clock.now(),
  actor: context.actor,
  correlationId: context.correlationId,
  traceparent: context.traceparent,
});

export interface UpdateListingInput extends CommandContext {
  readonly sellerAccountId: number;
  readonly productId: string;
  readonly changes: ListingChanges;
  /** If-Match: the versions the caller accepts; absent or empty: no check. */
  readonly matchVersions?: readonly number[] | undefined;
  /** The call's budget for images, when the update is an item of a bulk call. */
  readonly imageBudget?: ImageBudget | undefined;
}

/**
 * A PUT. With new images: the change is first checked on the listing as it stands (it exists, it is the
 * seller's, If-Match holds, the rules accept it), so nothing is fetched for a change that would be refused;
 * then the images are fetched and re-hosted with no transaction open; then the change is decided under the
 * stream's lock, on the listing as it is by then.
 */
export const updateListing = async (
  deps: ListingWriteDependencies,
  input: UpdateListingInput,
): Promise<VersionedListing> => changeListing(deps, input, false);

/**
 * An update that appends nothing when every field already holds the value sent (a bulk upsert's `unchanged`,
 * docs/specification.md, "Bulk upsert"): a sync that sends the same records again writes nothing. It is then
 * no availability confirmation either; a PUT always is.
 */
export const updateListingIfChanged = (
  deps: ListingWriteDependencies,
  input: UpdateListingInput,
): Promise<VersionedListing & { readonly changed: boolean }> => changeListing(deps, input, true);

const changeListing = async (
  deps: ListingWriteDependencies,
  input: UpdateListingInput,
  appendsOnlyChanges: boolean,
): Promise<VersionedListing & { readonly changed: boolean }> => {
  const productId = knownProductId(input.productId);
  const { changes } = input;
  const precondition = versionIn(input.sellerAccountId, input.matchVersions);
  const commandWith = (hostedImages?: Partial<HostedImages>): CommandOf<'UpdateListing'> => ({
    type: 'UpdateListing',
    data: {
      productId,
      sellerAccountId: input.sellerAccountId,
      changes,
      ...(hostedImages === undefined ? {} : { hostedImages }),
    },
    metadata: metadataOf(deps, input),
  });
  let hostedImages: Partial<HostedImages> | undefined;
  if (changes.imageUrl !== undefined || changes.galleryImageUrls !== undefined) {
    // The checks the lock's decision makes, before any fetch: a caller cannot make the marketplace fetch a URL
    // for a listing it may not change (docs/security.md, API7). One read of the stream, no lock, no transaction.
    const { state, version } = await readState(deps, productId);
    precondition?.(state, version);
    listingDecider.decide(commandWith(), state);
    hostedImages = await hostChangedImages(deps.images, changes, input.imageBudget);
  }
  return handleOnListing(deps, productId, () => commandWith(hostedImages), precondition, appendsOnlyChanges);
};

export const setQuantity = (
  deps: ListingWriteDependencies,
  input: CommandContext & {
    sellerAccountId: number;
    productId: string;
    quantity: number;
    matchVersions?: readonly number[] | undefined;
  },
): Promise<VersionedListing> => {
  const productId = knownProductId(input.productId);
  return handleOnListing(
    deps,
    productId,
    () => ({
      type: 'SetQuantity',
      data: { productId, sellerAccountId: input.sellerAccountId, quantity: input.quantity },
      metadata: metadataOf(deps, input),
    }),
    versionIn(input.sellerAccountId, input.matchVersions),
  );
};

/** The seller sets the lot's freight terms (docs/specification.md, "Checkout and orders": freight). */
export const setListingShipping = (
  deps: ListingWriteDependencies,
  input: CommandContext & {
    sellerAccountId: number;
    productId: string;
    shipping: ShippingDraft;
    /** If-Match: the versions the caller accepts; absent or empty: no check. */
    matchVersions?: readonly number[] | undefined;
  },
): Promise<VersionedListing> => {
  const productId = knownProductId(input.productId);
  return handleOnListing(
    deps,
    productId,
    () => ({
      type: 'SetListingShipping',
      data: { productId, sellerAccountId: input.sellerAccountId, shipping: input.shipping },
      metadata: metadataOf(deps, input),
    }),
    versionIn(input.sellerAccountId, input.matchVersions),
  );
};

export const reserveStock = (
  deps: ListingWriteDependencies,
  input: CommandContext & { productId: string; reservationId: string; quantity: number },
): Promise<VersionedListing> => {
  const productId = knownProductId(input.productId);
  return handleOnListing(deps, productId, () => ({
    type: 'ReserveStock',
    data: { productId, reservationId: input.reservationId, quantity: input.quantity },
    metadata: metadataOf(deps, input),
  }));
};

export const releaseStock = (
  deps: ListingWriteDependencies,
  input: CommandContext & { productId: string; reservationId: string },
): Promise<VersionedListing> => {
  const productId = knownProductId(input.productId);
  return handleOnListing(deps, productId, () => ({
    type: 'ReleaseStock',
    data: { productId, reservationId: input.reservationId },
    metadata: metadataOf(deps, input),
  }));
};

/** DELETE /api/products/{id}: off sale, open quotes and orders kept; idempotent. */
export const withdrawListing = (
  deps: ListingWriteDependencies,
  input: CommandContext & { sellerAccountId: number; productId: string; matchVersions?: readonly number[] },
): Promise<VersionedListing> => {
  const productId = knownProductId(input.productId);
  return handleOnListing(
    deps,
    productId,
    () => ({
      type: 'WithdrawListing',
      data: { productId, sellerAccountId: input.sellerAccountId },
      metadata: metadataOf(deps, input),
    }),
    versionIn(input.sellerAccountId, input.matchVersions),
  );
};

/** POST /api/products/{id}/relist: back on sale; idempotent. */
export const relistListing = (
  deps: ListingWriteDependencies,
  input: CommandContext & { sellerAccountId: number; productId: string; matchVersions?: readonly number[] },
): Promise<VersionedListing> => {
  const productId = knownProductId(input.productId);
  return handleOnListing(
    deps,
    productId,
    () => ({
      type: 'RelistListing',
      data: { productId, sellerAccountId: input.sellerAccountId },
      metadata: metadataOf(deps, input),
    }),
    versionIn(input.sellerAccountId, input.matchVersions),
  );
};

export interface BulkUpdateInput extends CommandContext {
  readonly sellerAccountId: number;
  readonly productIds: readonly string[];
  readonly mode: string;
  readonly value: number;
}

/** Another seller's listing is `not_found`, like a missing one (docs/specification.md, "Ids in paths"). */
export type BulkFailureReason = 'not_found' | 'invalid';

export interface BulkUpdateResult {
  readonly updated: VersionedListing[];
  readonly failures: { productId: string; reason: BulkFailureReason; message: string }[];
}

const FAILURE_REASONS: Partial<Record<AppError['kind'], BulkFailureReason>> = {
  not_found: 'not_found',
  validation: 'invalid',
};

const isBulkUpdateMode = (mode: string): mode is BulkUpdateMode =>
  (BULK_UPDATE_MODES as readonly string[]).includes(mode);

/**
 * One change on up to 200 of the seller's listings (the bulk_update_listings tool). The request as a whole is
 * checked first (400 for a bad mode, value or id count); then each listing is changed in its own transaction,
 * and a listing that does not exist, is another seller's or would break a rule is reported, not touched.
 */
export const bulkUpdateListings = async (
  deps: ListingWriteDependencies,
  input: BulkUpdateInput,
): Promise<BulkUpdateResult> => {
  const productIds = [...new Set(input.productIds)];
  if (productIds.length < 1 || productIds.length > BULK_UPDATE_LIMITS.maxItems) {
    const message = `must hold 1 to ${BULK_UPDATE_LIMITS.maxItems} product ids`;
    throw validationError(`productIds ${message}`, [{ path: 'productIds', message }]);
  }
  const { mode, value } = input;
  if (!isBulkUpdateMode(mode)) {
    const message = `must be one of ${BULK_UPDATE_MODES.join(', ')}`;
    throw validationError(`mode ${message}`, [{ path: 'mode', message }]);
  }
  checkBulkValue(mode, value);
  const result: BulkUpdateResult = { updated: [], failures: [] };
  for (const productId of productIds) {
    try {
      const updated = await handleOnListing(deps, knownProductId(productId), (state) => ({
        type: 'UpdateListing',
        data: {
          productId,
          sellerAccountId: input.sellerAccountId,
          // An absent listing gets no changes: the decider reports it (not found) before looking at them.
          changes: state.status === 'listed' ? bulkChangesOf(mode, value, state.listing) : {},
        },
        metadata: metadataOf(deps, input),
      }));
      result.updated.push(updated);
    } catch (error) {
      const reason = isAppError(error) ? FAILURE_REASONS[error.kind] : undefined;
      if (reason === undefined || !isAppError(error)) throw error;
      result.failures.push({ productId, reason, message: error.message });
    }
  }
  return result;
};

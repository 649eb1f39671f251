import type { CommandContext } from '@marketplace/eventsourcing';
import { parseActor } from '@marketplace/eventsourcing';
import { forbidden } from '@marketplace/platform';
import { Status, type CallContext } from 'nice-grpc-common';
import { ErrorInfo, RichServerError } from 'nice-grpc-error-details';
import { listingV1 } from '@marketplace/proto';
import type { GrpcService } from '@marketplace/rpc';
import type { BulkUpdateMode } from '@marketplace/vocabulary';
import { toListingMessage } from '../adapters/listing-proto.mapper.js';
import type { BulkUpdateInput, BulkUpdateResult, UpdateListingInput } from '../application/change-listing.js';
import type { BulkUpsertInput } from '../application/bulk-upsert.js';
import type { CreateListingInput, VersionedListing } from '../application/create-listing.js';
import type { BulkUpsertItem, BulkUpsertOutcome } from '../domain/bulk-upsert.js';
import type { SellerListingsResult } from '../application/list-seller-listings.js';
import type { SellerListingsFilter } from '../domain/seller-listings.query.js';
import type { ListingChanges, ListingDraft, ShippingDraft } from '../domain/listing.commands.js';
import { InsufficientStockError } from '../domain/listing.decider.js';

/** The application functions the gRPC API exposes. */
export interface ListingApplication {
  createListing(input: CreateListingInput): Promise<VersionedListing>;
  getListing(productId: string): Promise<VersionedListing>;
  updateListing(input: UpdateListingInput): Promise<VersionedListing>;
  setQuantity(
    input: CommandContext & {
      sellerAccountId: number;
      productId: string;
      quantity: number;
      matchVersions?: readonly number[];
    },
  ): Promise<VersionedListing>;
  bulkUpdateListings(input: BulkUpdateInput): Promise<BulkUpdateResult>;
  reserveStock(
    input: CommandContext & { productId: string; reservationId: string; quantity: number },
  ): Promise<VersionedListing>;
  releaseStock(
    input: CommandContext & { productId: string; reservationId: string },
  ): Promise<VersionedListing>;
  listSellerListings(sellerAccountId: number, filter: SellerListingsFilter): Promise<SellerListingsResult>;
  withdrawListing(input: ListingStatusInput): Promise<VersionedListing>;
  relistListing(input: ListingStatusInput): Promise<VersionedListing>;
  setListingShipping(
    input: CommandContext & {
      sellerAccountId: number;
      productId: string;
      shipping: ShippingDraft;
      matchVersions?: readonly number[];
    },
  ): Promise<VersionedListing>;
  bulkUpsertListings(input: BulkUpsertInput): Promise<BulkUpsertOutcome[]>;
}

type ListingStatusInput = CommandContext & {
  sellerAccountId: number;
  productId: string;
  matchVersions?: readonly number[];
};

/** Freight terms as the seller sent them; the listing rules check them. */
const shippingDraftOf = (shipping: listingV1.ListingShipping | undefined): ShippingDraft | undefined =>
  shipping && { mode: shipping.mode, cents: shipping.cents, shipFromRegion: shipping.shipFromRegion };

/** Proto optional fields arrive as undefined when absent, which is how the draft marks "take the default". */
const draftOf = (draft: listingV1.ListingDraft | undefined): ListingDraft =>
  draft === undefined
    ? { name: '', description: '' }
    : {
        name: draft.name,
        description: draft.description,
        sku: draft.sku,
        category: draft.category,
        condition: draft.condition,
        priceCents: draft.priceCents,
        quantity: draft.quantity,
        minOrderQuantity: draft.minOrderQuantity,
        minQuoteQuantity: draft.minQuoteQuantity,
        brand: draft.brand,
        imageUrl: draft.imageUrl,
        galleryImageUrls: draft.galleryImageUrls,
        originalRetailPriceCents: draft.originalRetailPriceCents,
        instantCheckout: draft.instantCheckout,
        promotePublicly: draft.promotePublicly,
        shipping: shippingDraftOf(draft.shipping),
      };

/** Absent proto optionals stay absent: the listing keeps those fields. */
const changesOf = (changes: listingV1.ListingChanges | undefined): ListingChanges => {
  if (changes === undefined) return {};
  const { galleryImageUrls, shipping, ...scalars } = changes;
  const present = Object.entries(scalars).filter(([, value]) => value !== undefined);
  return {
    ...Object.fromEntries(present),
    ...(galleryImageUrls === undefined ? {} : { galleryImageUrls: galleryImageUrls.urls }),
    ...(shipping === undefined ? {} : { shipping: shippingDraftOf(shipping) }),
  };
};

const DRAFT_FIELDS = new Set<string>(Object.keys(draftOf(listingV1.ListingDraft.fromPartial({}))));

const bulkItemOf = (item: listingV1.BulkUpsertItem): BulkUpsertItem => ({
  index: item.index,
  draft: draftOf(item.draft),
  // Only draft fields: anything else the caller named is not a field an update could replace.
  fields: item.fields.filter((field): field is keyof ListingDraft => DRAFT_FIELDS.has(field)),
});

const BULK_UPSERT_MODES: Record<listingV1.BulkUpsertMode, string> = {
  [listingV1.BulkUpsertMode.BULK_UPSERT_MODE_CREATE]: 'create',
  [listingV1.BulkUpsertMode.BULK_UPSERT_MODE_UPSERT_BY_SKU]: 'upsert_by_sku',
  // Left for the use case to refuse, naming the field.
  [listingV1.BulkUpsertMode.BULK_UPSERT_MODE_UNSPECIFIED]: '',
  [listingV1.BulkUpsertMode.UNRECOGNIZED]: '',
};

// Every proto value mapped (`satisfies`), onto @marketplace/vocabulary's BULK_UPDATE_MODES, which the use case
// checks the mode against.
const BULK_UPDATE_MODE_OF = {
  [listingV1.BulkUpdateMode.BULK_UPDATE_MODE_PRICE_SET]: 'price_set',
  [listingV1.BulkUpdateMode.BULK_UPDATE_MODE_PRICE_PERCENT_INCREASE]: 'price_percent_increase',
  [listingV1.BulkUpdateMode.BULK_UPDATE_MODE_PRICE_PERCENT_DECREASE]: 'price_percent_decrease',
  [listingV1.BulkUpdateMode.BULK_UPDATE_MODE_MOQ_SET]: 'moq_set',
  // Left for the use case to refuse, naming the field.
  [listingV1.BulkUpdateMode.BULK_UPDATE_MODE_UNSPECIFIED]: '',
  [listingV1.BulkUpdateMode.UNRECOGNIZED]: '',
} satisfies Record<listingV1.BulkUpdateMode, BulkUpdateMode | ''>;

/** A number this version has no name for (a newer sender's) is decoded as is: refused as no mode. */
const bulkUpdateModeOf = (mode: listingV1.BulkUpdateMode): BulkUpdateMode | '' =>
  (BULK_UPDATE_MODE_OF as Partial<Record<number, BulkUpdateMode | ''>>)[mode] ?? '';

const BULK_UPSERT_STATUSES: Record<BulkUpsertOutcome['status'], listingV1.BulkUpsertStatus> = {
  created: listingV1.BulkUpsertStatus.BULK_UPSERT_STATUS_CREATED,
  updated: listingV1.BulkUpsertStatus.BULK_UPSERT_STATUS_UPDATED,
  unchanged: listingV1.BulkUpsertStatus.BULK_UPSERT_STATUS_UNCHANGED,
  error: listingV1.BulkUpsertStatus.BULK_UPSERT_STATUS_ERROR,
};

const bulkOutcomeMessageOf = (outcome: BulkUpsertOutcome): listingV1.BulkUpsertOutcome =>
  outcome.status === 'error'
    ? listingV1.BulkUpsertOutcome.fromPartial({
        index: outcome.index,
        status: BULK_UPSERT_STATUSES.error,
        message: outcome.message,
        violations: outcome.violations.map(({ path, message }) => ({ field: path, description: message })),
      })
    : listingV1.BulkUpsertOutcome.fromPartial({
        index: outcome.index,
        status: BULK_UPSERT_STATUSES[outcome.status],
        productId: outcome.productId,
        version: outcome.version,
      });

interface CommandRequest {
  readonly actor?: listingV1.UpdateListingRequest['actor'];
  readonly correlationId: string;
}

const contextOf = (request: CommandRequest, { metadata }: CallContext): CommandContext => ({
  actor: parseActor(request.actor),
  correlationId: request.correlationId === '' ? undefined : request.correlationId,
  // The caller's trace context travels on to the events (and from them to the log's headers).
  traceparent: metadata.get('traceparent'),
});

/**
 * A seller's command acts on the authenticated seller's listings only: the actor comes from the caller's verified
 * service token (docs/security.md, "Internal calls"), and `sellerAccountId` must name the same account.
 */
const sellerContextOf = (
  request: CommandRequest & { readonly sellerAccountId: number },
  context: CallContext,
): CommandContext => {
  const commandContext = contextOf(request, context);
  const { actor } = commandContext;
  if (actor.kind !== 'seller' || actor.id !== String(request.sellerAccountId)) {
    throw forbidden(`seller account ${request.sellerAccountId} is not the authenticated actor's`);
  }
  return commandContext;
};

const listingReply = ({ listing, version }: VersionedListing) => ({
  listing: toListingMessage(listing, version),
});

/**
 * Insufficient stock is FAILED_PRECONDITION (retrying the same call cannot succeed until stock changes), with
 * the kind `conflict` in ErrorInfo so clients of @marketplace/rpc still get an AppError with the message.
 */
const failedPreconditionOf = (error: unknown): unknown =>
  error instanceof InsufficientStockError
    ? new RichServerError(Status.FAILED_PRECONDITION, error.message, [
        ErrorInfo.fromPartial({
          domain: 'marketplace',
          reason: 'CONFLICT',
          metadata: { cause: 'INSUFFICIENT_STOCK', available: String(error.available) },
        }),
      ])
    : error;

/** ListingService over gRPC: maps messages to application inputs and back; AppErrors become statuses in rpc. */
export const listingGrpcService = (
  application: ListingApplication,
): GrpcService<listingV1.ListingServiceDefinition> => ({
  definition: listingV1.ListingServiceDefinition,
  implementation: {
    async createListing(request, context) {
      const created = await application.createListing({
        sellerAccountId: request.sellerAccountId,
        draft: draftOf(request.draft),
        idempotencyKey: request.idempotencyKey,
        ...sellerContextOf(request, context),
      });
      return listingReply(created);
    },
    async getListing(request) {
      return listingReply(await application.getListing(request.productId));
    },
    async updateListing(request, context) {
      const updated = await application.updateListing({
        sellerAccountId: request.sellerAccountId,
        productId: request.productId,
        changes: changesOf(request.changes),
        matchVersions: request.matchVersions,
        ...sellerContextOf(request, context),
      });
      return listingReply(updated);
    },
    async setQuantity(request, context) {
      const updated = await application.setQuantity({
        sellerAccountId: request.sellerAccountId,
        productId: request.productId,
        quantity: request.quantity,
        matchVersions: request.matchVersions,
        ...sellerContextOf(request, context),
      });
      return listingReply(updated);
    },
    async bulkUpsertListings(request, context) {
      const outcomes = await application.bulkUpsertListings({
        sellerAccountId: request.sellerAccountId,
        mode: BULK_UPSERT_MODES[request.mode],
        items: request.items.map(bulkItemOf),
        idempotencyKey: request.idempotencyKey,
        refusedItemsDigest: request.refusedItemsDigest,
        ...sellerContextOf(request, context),
      });
      return { outcomes: outcomes.map(bulkOutcomeMessageOf) };
    },
    async bulkUpdateListings(request, context) {
      const { updated, failures } = await application.bulkUpdateListings({
        sellerAccountId: request.sellerAccountId,
        productIds: request.productIds,
        mode: bulkUpdateModeOf(request.mode),
        value: request.value,
        ...sellerContextOf(request, context),
      });
      return {
        updated: updated.map(({ listing, version }) => toListingMessage(listing, version)),
        failures,
      };
    },
    async reserveStock(request, context) {
      try {
        const reserved = await application.reserveStock({
          productId: request.productId,
          reservationId: request.reservationId,
          quantity: request.quantity,
          ...contextOf(request, context),
        });
        return listingReply(reserved);
      } catch (error) {
        throw failedPreconditionOf(error);
      }
    },
    async releaseStock(request, context) {
      const released = await application.releaseStock({
        productId: request.productId,
        reservationId: request.reservationId,
        ...contextOf(request, context),
      });
      return listingReply(released);
    },
    async withdrawListing(request, context) {
      const withdrawn = await application.withdrawListing({
        sellerAccountId: request.sellerAccountId,
        productId: request.productId,
        matchVersions: request.matchVersions,
        ...sellerContextOf(request, context),
      });
      return listingReply(withdrawn);
    },
    async relistListing(request, context) {
      const relisted = await application.relistListing({
        sellerAccountId: request.sellerAccountId,
        productId: request.productId,
        matchVersions: request.matchVersions,
        ...sellerContextOf(request, context),
      });
      return listingReply(relisted);
    },
    async setListingShipping(request, context) {
      const updated = await application.setListingShipping({
        sellerAccountId: request.sellerAccountId,
        productId: request.productId,
        shipping: shippingDraftOf(request.shipping) ?? { mode: '' },
        matchVersions: request.matchVersions,
        ...sellerContextOf(request, context),
      });
      return listingReply(updated);
    },
    async listSellerListings(request, context) {
      sellerContextOf({ ...request, correlationId: '' }, context);
      const { listings, total, nextCursor } = await application.listSellerListings(request.sellerAccountId, {
        status: request.status,
        visibility: request.visibility,
        category: request.category,
        sku: request.sku,
        updatedSince: request.updatedSinceMs,
        cursor: request.cursor,
        limit: request.limit,
      });
      return {
        listings: listings.map(({ listing, version }) => toListingMessage(listing, version)),
        total,
        nextCursor,
      };
    },
  },
});

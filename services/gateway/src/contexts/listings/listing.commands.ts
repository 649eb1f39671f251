import { listingV1 } from '@marketplace/proto';
import type { BulkUpdateMode, BulkUpsertMode } from '@marketplace/vocabulary';
import { formatProductId, notFound } from '@marketplace/platform';
import type { ListingClient } from './listing.client.js';
import type { BulkUpsertAnswer } from './bulk-upsert.js';
import { bulkAnswerOf, bulkItemsOf, bulkModeOf, refusedItemsDigestOf } from './bulk-upsert.js';
import { listingDraftOf } from './create-listing.schema.js';
import type { Principal } from '../../edge/account.js';
import { requireSeller } from '../../edge/account.js';
import type {
  CreatedListingView,
  ProductDetails,
  ProductViews,
  SellerListing,
} from '../../edge/product.views.js';

/** A seller's list filters; absent ones do not filter. */
export interface SellerListingsFilter {
  readonly status?: string | undefined;
  readonly visibility?: string | undefined;
  readonly category?: string | undefined;
  readonly sku?: string | undefined;
  readonly updatedSinceMs?: number | undefined;
  readonly cursor?: string | undefined;
  readonly limit: number;
}

export interface SellerListingsPage {
  readonly listings: SellerListing[];
  readonly total: number;
  /** Pass as `cursor` for the next page; null on the last page. */
  readonly next_cursor: string | null;
}

/** What a bulk update did: the listings changed, and the ones left untouched with the reason. */
export interface BulkUpdateOutcome {
  readonly updated: ProductDetails[];
  readonly failures: { product_id: string; reason: string; message: string }[];
}

/** Only sellers change listings; the listing service then checks that the listing is this seller's own. */
const sellerActor = (caller: Principal, what: string): listingV1.UpdateListingRequest['actor'] => {
  const seller = requireSeller(caller, what);
  return { kind: 'seller', id: String(seller.accountId) };
};

/** `12` and `product_12` name the same product (the tool sends integers, REST paths use product ids). */
export const productIdOf = (id: string | number): string =>
  typeof id === 'number' ? formatProductId(id) : id;

/** Seller commands shared by REST and the MCP tools. */
// Keyed by @marketplace/vocabulary's BULK_UPDATE_MODES, so the compiler checks every mode has its proto value.
const BULK_UPDATE_MODE_OF: Record<BulkUpdateMode, listingV1.BulkUpdateMode> = {
  price_set: listingV1.BulkUpdateMode.BULK_UPDATE_MODE_PRICE_SET,
  price_percent_increase: listingV1.BulkUpdateMode.BULK_UPDATE_MODE_PRICE_PERCENT_INCREASE,
  price_percent_decrease: listingV1.BulkUpdateMode.BULK_UPDATE_MODE_PRICE_PERCENT_DECREASE,
  moq_set: listingV1.BulkUpdateMode.BULK_UPDATE_MODE_MOQ_SET,
};

export class ListingCommands {
  constructor(
    private readonly listing: ListingClient,
    private readonly views: ProductViews,
  ) {}

  /**
   * Publishes a new listing for the calling seller; buyers are refused. With an idempotency key, the listing
   * service creates at most one listing per key and draft, and answers a repeat with that listing.
   */
  async create(
    seller: Principal,
    draft: listingV1.ListingDraft,
    correlationId: string,
    idempotencyKey?: string,
  ): Promise<CreatedListingView> {
    const listing = await this.listing.createListing({
      actor: sellerActor(seller, 'publish listings'),
      sellerAccountId: seller.accountId,
      draft,
      correlationId,
      idempotencyKey,
    });
    const details = this.views.detailsOfListing(listing);
    if (!listing.imagePlaceholder) return details;
    // docs/specification.md, "Listings": the answer says when the image is a placeholder.
    return {
      ...details,
      notices: [
        `No image was sent and no similar ${listing.category} listing has one: the listing shows the neutral ` +
          `${listing.category} placeholder. Send imageUrl (PUT /api/products/${listing.productId}, or ` +
          'update_listing image_url) to show your own.',
      ],
    };
  }

  /**
   * Changes the seller's own listing (404 for another seller's, as for none); with `matchVersions` (If-Match) only
   * while it is at one of them (412).
   */
  async update(
    seller: Principal,
    productId: string,
    changes: listingV1.ListingChanges,
    correlationId: string,
    matchVersions: readonly number[] = [],
  ): Promise<SellerListing> {
    const listing = await this.listing.updateListing({
      actor: sellerActor(seller, 'change listings'),
      sellerAccountId: seller.accountId,
      productId,
      changes,
      correlationId,
      matchVersions: [...matchVersions],
    });
    return this.views.sellerListingOf(listing);
  }

  /** Sets the stock of the seller's own listing; 0 marks it sold out. */
  async setQuantity(
    seller: Principal,
    productId: string,
    quantity: number,
    correlationId: string,
    matchVersions: readonly number[] = [],
  ): Promise<SellerListing> {
    const listing = await this.listing.setQuantity({
      actor: sellerActor(seller, 'change listings'),
      sellerAccountId: seller.accountId,
      productId,
      quantity,
      correlationId,
      matchVersions: [...matchVersions],
    });
    return this.views.sellerListingOf(listing);
  }

  /**
   * Sets the freight terms of the seller's own listing (docs/specification.md, "Checkout and orders": freight);
   * with `matchVersions` (If-Match) only while it is at one of them (412), as `update` does.
   */
  async setShipping(
    seller: Principal,
    productId: string,
    shipping: { mode: string; cents?: number | undefined; shipFromRegion?: string | undefined },
    correlationId: string,
    matchVersions: readonly number[] = [],
  ): Promise<SellerListing> {
    const listing = await this.listing.setListingShipping({
      actor: sellerActor(seller, 'change listings'),
      sellerAccountId: seller.accountId,
      productId,
      shipping: { mode: shipping.mode, cents: shipping.cents, shipFromRegion: shipping.shipFromRegion },
      correlationId,
      matchVersions: [...matchVersions],
    });
    return this.views.sellerListingOf(listing);
  }

  /**
   * The seller's own listing as it stands (read-your-writes), with its version. Another seller's listing is 404
   * like a missing one: its existence is not the caller's business.
   */
  async getMine(seller: Principal, productId: string): Promise<SellerListing> {
    sellerActor(seller, 'read their listings');
    const listing = await this.listing.getListing(productId);
    if (listing.sellerAccountId !== seller.accountId) throw notFound(`listing ${productId} does not exist`);
    return this.views.sellerListingOf(listing);
  }

  /** One page of the seller's own listings, oldest change first (services/listing README). */
  async listMine(seller: Principal, filter: SellerListingsFilter): Promise<SellerListingsPage> {
    const { listings, total, nextCursor } = await this.listing.listSellerListings({
      actor: sellerActor(seller, 'read their listings'),
      sellerAccountId: seller.accountId,
      status: filter.status ?? '',
      visibility: filter.visibility ?? '',
      category: filter.category ?? '',
      sku: filter.sku ?? '',
      updatedSinceMs: filter.updatedSinceMs,
      cursor: filter.cursor ?? '',
      limit: filter.limit,
    });
    return {
      listings: listings.map((listing) => this.views.sellerListingOf(listing)),
      total,
      next_cursor: nextCursor === '' ? null : nextCursor,
    };
  }

  /**
   * Creates or updates up to 1,000 of the seller's listings (docs/specification.md, "Bulk upsert"): items this
   * gateway refuses are answered here, the others by the listing service, each on its own.
   */
  async bulkUpsert(
    seller: Principal,
    body: { readonly mode: BulkUpsertMode; readonly items: readonly unknown[] },
    correlationId: string,
    idempotencyKey?: string,
  ): Promise<BulkUpsertAnswer> {
    const actor = sellerActor(seller, 'publish listings');
    const { sent, refused } = bulkItemsOf(body.items, listingDraftOf);
    const { outcomes } =
      sent.length === 0
        ? { outcomes: [] }
        : await this.listing.bulkUpsertListings({
            actor,
            sellerAccountId: seller.accountId,
            mode: bulkModeOf(body.mode),
            items: sent,
            refusedItemsDigest: refusedItemsDigestOf(body.items, refused),
            correlationId,
            idempotencyKey,
          });
    return bulkAnswerOf(outcomes, refused);
  }

  /** Takes the seller's own listing off sale (DELETE); open quotes and orders keep it; idempotent. */
  async withdraw(
    seller: Principal,
    productId: string,
    correlationId: string,
    matchVersions: readonly number[] = [],
  ): Promise<SellerListing> {
    const listing = await this.listing.withdrawListing({
      actor: sellerActor(seller, 'withdraw listings'),
      sellerAccountId: seller.accountId,
      productId,
      correlationId,
      matchVersions: [...matchVersions],
    });
    return this.views.sellerListingOf(listing);
  }

  /** Puts a withdrawn listing of the seller's back on sale; idempotent. */
  async relist(
    seller: Principal,
    productId: string,
    correlationId: string,
    matchVersions: readonly number[] = [],
  ): Promise<SellerListing> {
    const listing = await this.listing.relistListing({
      actor: sellerActor(seller, 'relist listings'),
      sellerAccountId: seller.accountId,
      productId,
      correlationId,
      matchVersions: [...matchVersions],
    });
    return this.views.sellerListingOf(listing);
  }

  /** One change on up to 200 listings; those that are not the seller's or break a rule are reported. */
  async bulkUpdate(
    seller: Principal,
    request: { productIds: readonly (string | number)[]; mode: BulkUpdateMode; value: number },
    correlationId: string,
  ): Promise<BulkUpdateOutcome> {
    const { updated, failures } = await this.listing.bulkUpdateListings({
      actor: sellerActor(seller, 'change listings'),
      sellerAccountId: seller.accountId,
      productIds: request.productIds.map(productIdOf),
      mode: BULK_UPDATE_MODE_OF[request.mode],
      value: request.value,
      correlationId,
    });
    return {
      updated: updated.map((listing) => this.views.detailsOfListing(listing)),
      failures: failures.map(({ productId, reason, message }) => ({
        product_id: productId,
        reason,
        message,
      })),
    };
  }
}

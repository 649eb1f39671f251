import type { Database, Queryable } from '@marketplace/database';
import type { CompanionWrite } from '@marketplace/eventsourcing';
import type { Listing } from '../domain/listing.events.js';
import type {
  SellerListingsCursor,
  SellerListingsFilter,
  SellerListingsQuery,
} from '../domain/seller-listings.query.js';
import { encodeCursor, sellerListingsQueryOf } from '../domain/seller-listings.query.js';

export interface SellerListingRow {
  readonly listing: Listing;
  readonly version: number;
}

/** Every append to a listing's stream carries its row in the seller's list, in the same statement. */
export interface SellerListingRows {
  rowOf(row: SellerListingRow): CompanionWrite;
  /** The rows of a batch's listings, as the companion of one multi-stream append. */
  rowsOf(rows: readonly SellerListingRow[]): CompanionWrite;
}

/** The rows of listings by product id: what a repeated bulk create answers. */
export interface SellerListingsByProductId {
  byProductIds(q: Queryable, productIds: readonly string[]): Promise<Map<string, SellerListingRow>>;
}

export interface SellerListingsPage {
  readonly listings: SellerListingRow[];
  readonly total: number;
  readonly next?: SellerListingsCursor;
}

/** The seller's listings as the appends keep them (adapters/seller-listings.table.ts). */
export interface SellerListingsStore {
  /** One page of the seller's listings and how many match in all; `next` is absent on the last page. */
  page(q: Queryable, query: SellerListingsQuery): Promise<SellerListingsPage>;
  /** The seller's listings with each of these skus, by sku. */
  bySkus(
    q: Queryable,
    sellerAccountId: number,
    skus: readonly string[],
  ): Promise<Map<string, SellerListingRow[]>>;
}

export interface SellerListingsResult {
  readonly listings: { readonly listing: Listing; readonly version: number }[];
  readonly total: number;
  /** Empty on the last page. */
  readonly nextCursor: string;
}

/** One page of a seller's own listings (filters checked first: a bad one is a validation error naming it). */
export const listSellerListings = async (
  deps: { readonly db: Database; readonly sellerListings: SellerListingsStore },
  sellerAccountId: number,
  filter: SellerListingsFilter,
): Promise<SellerListingsResult> => {
  const query = sellerListingsQueryOf(sellerAccountId, filter);
  const page = await deps.sellerListings.page(deps.db, query);
  return {
    listings: page.listings,
    total: page.total,
    nextCursor: page.next === undefined ? '' : encodeCursor(page.next),
  };
};

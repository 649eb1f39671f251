import type { Database } from '@marketplace/database';
import type { SellerListingsTable } from '../adapters/seller-listings.table.js';
import type { Listing } from '../domain/listing.events.js';
import type { SellerListingsFilter } from '../domain/seller-listings.query.js';
import { encodeCursor, sellerListingsQueryOf } from '../domain/seller-listings.query.js';

export interface SellerListingsResult {
  readonly listings: { readonly listing: Listing; readonly version: number }[];
  readonly total: number;
  /** Empty on the last page. */
  readonly nextCursor: string;
}

/** One page of a seller's own listings (filters checked first: a bad one is a validation error naming it). */
export const listSellerListings = async (
  deps: { readonly db: Database; readonly sellerListings: SellerListingsTable },
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

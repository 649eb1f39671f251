import { listingV1 } from '@marketplace/proto';
import type { GrpcClientOptions } from '@marketplace/rpc';
import { createGrpcClient } from '@marketplace/rpc';
import { BULK_UPSERT_LIMITS } from '@marketplace/vocabulary';

/**
 * Creating a listing may fetch and re-host an external image (up to 10 s, 3 redirects) or search for one, so
 * it gets a longer deadline than reads.
 */
export const CREATE_LISTING_DEADLINE_MS = 25_000;

/** The gateway's view of the listing service: one method per RPC it uses, failures as AppErrors. */
export interface ListingClient {
  createListing(request: listingV1.CreateListingRequest): Promise<listingV1.Listing>;
  updateListing(request: listingV1.UpdateListingRequest): Promise<listingV1.Listing>;
  setQuantity(request: listingV1.SetQuantityRequest): Promise<listingV1.Listing>;
  bulkUpdateListings(
    request: listingV1.BulkUpdateListingsRequest,
  ): Promise<listingV1.BulkUpdateListingsResponse>;
  getListing(productId: string): Promise<listingV1.Listing>;
  withdrawListing(request: listingV1.WithdrawListingRequest): Promise<listingV1.Listing>;
  relistListing(request: listingV1.RelistListingRequest): Promise<listingV1.Listing>;
  setListingShipping(request: listingV1.SetListingShippingRequest): Promise<listingV1.Listing>;
  listSellerListings(
    request: listingV1.ListSellerListingsRequest,
  ): Promise<listingV1.ListSellerListingsResponse>;
  bulkUpsertListings(
    request: listingV1.BulkUpsertListingsRequest,
  ): Promise<listingV1.BulkUpsertListingsResponse>;
  close(): void;
}

/** 200 listings, each in its own transaction: seconds at worst, never the 5 s of a plain call. */
export const BULK_UPDATE_DEADLINE_MS = 30_000;

const listingOf = (
  method: string,
  response: { listing?: listingV1.Listing | undefined },
): listingV1.Listing => {
  if (!response.listing) throw new Error(`${method} answered without a listing`);
  return response.listing;
};

/** Reads, sent once more when their replica went away (writes only with an idempotency key). */
const REPEATABLE = ['GetListing', 'ListSellerListings'];

export const createListingClient = (address: string, options?: GrpcClientOptions): ListingClient => {
  const grpc = createGrpcClient(listingV1.ListingServiceDefinition, address, {
    ...options,
    repeatableMethods: REPEATABLE,
  });
  const { client } = grpc;
  return {
    createListing: async (request) =>
      listingOf(
        'CreateListing',
        await client.createListing(request, { deadline: CREATE_LISTING_DEADLINE_MS }),
      ),
    // A PUT may fetch and re-host a new image, as a create does.
    updateListing: async (request) =>
      listingOf(
        'UpdateListing',
        await client.updateListing(request, { deadline: CREATE_LISTING_DEADLINE_MS }),
      ),
    setQuantity: async (request) => listingOf('SetQuantity', await client.setQuantity(request)),
    bulkUpdateListings: (request) =>
      client.bulkUpdateListings(request, { deadline: BULK_UPDATE_DEADLINE_MS }),
    withdrawListing: async (request) => listingOf('WithdrawListing', await client.withdrawListing(request)),
    relistListing: async (request) => listingOf('RelistListing', await client.relistListing(request)),
    setListingShipping: async (request) =>
      listingOf('SetListingShipping', await client.setListingShipping(request)),
    getListing: async (productId) => listingOf('GetListing', await client.getListing({ productId })),
    listSellerListings: (request) => client.listSellerListings(request),
    bulkUpsertListings: (request) =>
      client.bulkUpsertListings(request, { deadline: BULK_UPSERT_LIMITS.callDeadlineMs }),
    close: () => grpc.close(),
  };
};

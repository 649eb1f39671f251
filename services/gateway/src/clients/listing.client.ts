import { listingV1 } from '@marketplace/proto';
import type { GrpcClientOptions } from '@marketplace/rpc';
import { createGrpcClient } from '@marketplace/rpc';

/**
 * Creating a listing may fetch and re-host an external image (up to 10 s, 3 redirects) or search for one, so
 * it gets a longer deadline than reads.
 */
export const CREATE_LISTING_DEADLINE_MS = 25_000;

/** The gateway's view of the listing service: one method per RPC it uses, failures as AppErrors. */
export interface ListingClient {
  createListing(request: listingV1.CreateListingRequest): Promise<listingV1.Listing>;
  close(): void;
}

export const createListingClient = (address: string, options?: GrpcClientOptions): ListingClient => {
  const grpc = createGrpcClient(listingV1.ListingServiceDefinition, address, options);
  const { client } = grpc;
  return {
    createListing: async (request) => {
      const { listing } = await client.createListing(request, { deadline: CREATE_LISTING_DEADLINE_MS });
      if (!listing) throw new Error('CreateListing answered without a listing');
      return listing;
    },
    close: () => grpc.close(),
  };
};

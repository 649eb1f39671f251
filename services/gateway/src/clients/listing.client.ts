import { listingV1 } from '@marketplace/proto';
import type { GrpcClientOptions } from '@marketplace/rpc';
import { createGrpcClient } from '@marketplace/rpc';

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
      const { listing } = await client.createListing(request);
      if (!listing) throw new Error('CreateListing answered without a listing');
      return listing;
    },
    close: () => grpc.close(),
  };
};

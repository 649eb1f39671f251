import type { Actor } from '@marketplace/eventsourcing';
import { isAppError } from '@marketplace/platform';
import { listingV1 } from '@marketplace/proto';
import type { GrpcClientOptions } from '@marketplace/rpc';
import { createGrpcClient } from '@marketplace/rpc';
import type { Listings } from '../application/ports.js';
import type { FreightTerms } from '../domain/checkout.rules.js';

const ORDER_SERVICE_ACTOR: Actor = { kind: 'system', id: 'order-service' };

/** A mode this version does not know is priced as quoted on request: the seller is asked, nothing is guessed. */
export const freightTermsOf = (shipping: listingV1.ListingShipping | undefined): FreightTerms | undefined => {
  switch (shipping?.mode) {
    case undefined:
      return undefined;
    case 'included':
      return { mode: 'included' };
    case 'flat_per_order':
    case 'per_unit':
      return { mode: shipping.mode, cents: shipping.cents ?? 0 };
    case 'buyer_pickup':
      return { mode: 'buyer_pickup', shipFromRegion: shipping.shipFromRegion ?? '' };
    default:
      return { mode: 'quoted_on_request' };
  }
};

/** The listing service over gRPC, as checkout's Listings port. */
export const createGrpcListings = (
  address: string,
  options?: GrpcClientOptions,
): Listings & { close(): void } => {
  const grpc = createGrpcClient(listingV1.ListingServiceDefinition, address, options);
  const { client } = grpc;
  return {
    get: async (productId) => {
      try {
        const { listing } = await client.getListing({ productId });
        // Only listings on the agent-facing surfaces can be bought; in-app and withdrawn ones are not found.
        if (!listing?.promotePublicly || listing.withdrawnAtMs !== undefined) return undefined;
        return {
          productId: listing.productId,
          name: listing.name,
          sellerAccountId: listing.sellerAccountId,
          priceCents: listing.priceCents,
          currency: listing.currency,
          quantity: listing.quantity,
          minOrderQuantity: listing.minOrderQuantity,
          instantCheckout: listing.instantCheckout,
          freight: freightTermsOf(listing.shipping),
        };
      } catch (error) {
        if (isAppError(error) && error.kind === 'not_found') return undefined;
        throw error;
      }
    },
    reserve: async (productId, quantity, reservationId) => {
      await client.reserveStock({
        productId,
        quantity,
        reservationId,
        actor: ORDER_SERVICE_ACTOR,
        correlationId: '',
      });
    },
    release: async (productId, reservationId) => {
      await client.releaseStock({ productId, reservationId, actor: ORDER_SERVICE_ACTOR, correlationId: '' });
    },
    close: () => grpc.close(),
  };
};

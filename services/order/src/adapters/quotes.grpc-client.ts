import { isAppError } from '@marketplace/platform';
import { quoteV1 } from '@marketplace/proto';
import type { GrpcClientOptions } from '@marketplace/rpc';
import { createGrpcClient } from '@marketplace/rpc';
import type { Quotes } from '../application/ports.js';
import { freightTermsOf } from './listings.grpc-client.js';

/** The quote service over gRPC, as checkout's Quotes port (an agreed price for a quoted line). */
export const createGrpcQuotes = (
  address: string,
  options?: GrpcClientOptions,
): Quotes & { close(): void } => {
  const grpc = createGrpcClient(quoteV1.QuoteServiceDefinition, address, options);
  return {
    get: async (quoteRequestId) => {
      try {
        const { quoteRequest } = await grpc.client.getQuoteRequest({ quoteRequestId });
        if (!quoteRequest) return undefined;
        return {
          quoteRequestId: quoteRequest.quoteRequestId,
          productId: quoteRequest.productId,
          quantity: quoteRequest.quantity,
          agreedUnitPriceCents: quoteRequest.agreedUnitPriceCents,
          offerExpiresAt: quoteRequest.offerExpiresAtMs,
          buyerAccountId: quoteRequest.buyerAccountId,
          freight: quoteRequest.listingShippingRecorded
            ? (freightTermsOf(quoteRequest.listingShipping) ?? null)
            : undefined,
        };
      } catch (error) {
        if (isAppError(error) && error.kind === 'not_found') return undefined;
        throw error;
      }
    },
    close: () => grpc.close(),
  };
};

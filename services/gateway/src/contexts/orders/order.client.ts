import { orderV1 } from '@marketplace/proto';
import type { GrpcClient, GrpcClientOptions } from '@marketplace/rpc';
import { createGrpcClient } from '@marketplace/rpc';

/**
 * Completing a checkout reserves stock in the listing service line by line before placing the orders, so it gets
 * a longer deadline than the other calls.
 */
export const COMPLETE_CHECKOUT_DEADLINE_MS = 15_000;

/** The gateway's view of the order service: its generated client, with the deadlines of the slow calls. */
export interface OrderClient {
  readonly rpc: GrpcClient<orderV1.OrderServiceDefinition>['client'];
  completeCheckout(request: orderV1.CompleteCheckoutRequest): Promise<orderV1.CompleteCheckoutResponse>;
  quickBuy(request: orderV1.QuickBuyRequest): Promise<orderV1.QuickBuyResponse>;
  close(): void;
}

/** Reads, sent once more when their replica went away (writes only with an idempotency key). */
const REPEATABLE = ['GetCheckout', 'GetBuyerOrder', 'GetSellerOrders', 'SellerAttention', 'CountOrdersSince'];

export const createOrderClient = (address: string, options?: GrpcClientOptions): OrderClient => {
  const grpc = createGrpcClient(orderV1.OrderServiceDefinition, address, {
    ...options,
    repeatableMethods: REPEATABLE,
  });
  const { client } = grpc;
  return {
    rpc: client,
    completeCheckout: (request) =>
      client.completeCheckout(request, { deadline: COMPLETE_CHECKOUT_DEADLINE_MS }),
    quickBuy: (request) => client.quickBuy(request, { deadline: COMPLETE_CHECKOUT_DEADLINE_MS }),
    close: () => grpc.close(),
  };
};

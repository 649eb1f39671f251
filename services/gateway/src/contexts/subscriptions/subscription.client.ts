import { subscriptionV1 } from '@marketplace/proto';
import type { GrpcClientOptions } from '@marketplace/rpc';
import { createGrpcClient } from '@marketplace/rpc';

/** The gateway's view of the subscription service: one method per RPC it uses, failures as AppErrors. */
export interface SubscriptionClient {
  subscribe(request: subscriptionV1.SubscribeRequest): Promise<subscriptionV1.SubscribeResponse>;
  listSubscriptions(request: subscriptionV1.ListSubscriptionsRequest): Promise<subscriptionV1.Subscription[]>;
  deleteSubscription(request: subscriptionV1.DeleteSubscriptionRequest): Promise<void>;
  getSubscriptionResource(
    request: subscriptionV1.GetSubscriptionResourceRequest,
  ): Promise<subscriptionV1.GetSubscriptionResourceResponse>;
  rotateWebhookSecret(
    request: subscriptionV1.RotateWebhookSecretRequest,
  ): Promise<subscriptionV1.RotateWebhookSecretResponse>;
  registerSellerWebhook(
    request: subscriptionV1.RegisterSellerWebhookRequest,
  ): Promise<subscriptionV1.RegisterSellerWebhookResponse>;
  listSellerWebhooks(
    request: subscriptionV1.ListSellerWebhooksRequest,
  ): Promise<subscriptionV1.SellerWebhook[]>;
  deleteSellerWebhook(request: subscriptionV1.DeleteSellerWebhookRequest): Promise<void>;
  confirmEmail(request: subscriptionV1.ConfirmEmailRequest): Promise<subscriptionV1.ConfirmEmailResponse>;
  close(): void;
}

/** Reads, sent once more when their replica went away. */
const REPEATABLE = ['ListSubscriptions', 'GetSubscriptionResource', 'ListSellerWebhooks'];

export const createSubscriptionClient = (
  address: string,
  options?: GrpcClientOptions,
): SubscriptionClient => {
  const grpc = createGrpcClient(subscriptionV1.SubscriptionServiceDefinition, address, {
    ...options,
    repeatableMethods: REPEATABLE,
  });
  const { client } = grpc;
  return {
    subscribe: (request) => client.subscribe(request),
    listSubscriptions: async (request) => (await client.listSubscriptions(request)).subscriptions,
    deleteSubscription: async (request) => {
      await client.deleteSubscription(request);
    },
    getSubscriptionResource: (request) => client.getSubscriptionResource(request),
    rotateWebhookSecret: (request) => client.rotateWebhookSecret(request),
    registerSellerWebhook: (request) => client.registerSellerWebhook(request),
    listSellerWebhooks: async (request) => (await client.listSellerWebhooks(request)).webhooks,
    deleteSellerWebhook: async (request) => {
      await client.deleteSellerWebhook(request);
    },
    confirmEmail: (request) => client.confirmEmail(request),
    close: () => grpc.close(),
  };
};

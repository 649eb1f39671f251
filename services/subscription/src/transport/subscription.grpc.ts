import type { CommandContext } from '@marketplace/eventsourcing';
import { parseActor } from '@marketplace/eventsourcing';
import { subscriptionV1 } from '@marketplace/proto';
import { actingAccountId, type GrpcService } from '@marketplace/rpc';
import { validationError } from '@marketplace/platform';
import { channelDraftOf, toSubscriptionMessage } from '../adapters/subscription-proto.mapper.js';
import type {
  SubscribeInput,
  SubscribeResult,
  SubscriptionResource,
  RotatedWebhookSecret,
  RotateWebhookSecretInput,
  UnsubscribeInput,
} from '../application/subscriptions.js';
import type { Subscription } from '../domain/subscription.js';
import type { SellerWebhookView } from '../application/seller-webhooks.js';
import type { Delivery, SellerWebhook } from '../application/ports.js';

/** The application functions the gRPC API exposes. */
export interface SubscriptionApplication {
  subscribe(input: SubscribeInput): Promise<SubscribeResult>;
  unsubscribe(input: UnsubscribeInput): Promise<void>;
  listSubscriptions(ownerAccountId: number): Promise<Subscription[]>;
  subscriptionResource(subscriptionId: string, ownerAccountId: number): Promise<SubscriptionResource>;
  rotateWebhookSecret(input: RotateWebhookSecretInput): Promise<RotatedWebhookSecret>;
  registerSellerWebhook(input: {
    sellerAccountId: number;
    url: string;
  }): Promise<{ webhook: SellerWebhook; secret: string }>;
  listSellerWebhooks(sellerAccountId: number): Promise<SellerWebhookView[]>;
  deleteSellerWebhook(input: { sellerAccountId: number; endpointId: string }): Promise<void>;
  /** Resolves to the mailbox confirmed. */
  confirmEmail(input: CommandContext & { token: string }): Promise<string>;
  /** The mailboxes of these subscriptions' email channels not confirmed yet (shown pending in answers). */
  unconfirmedMailboxes(subscriptions: readonly Subscription[]): Promise<ReadonlySet<string>>;
}

const toSellerWebhookMessage = (
  webhook: SellerWebhook & { deliveries?: Delivery[] },
): subscriptionV1.SellerWebhook => ({
  endpointId: webhook.endpointId,
  url: webhook.url,
  createdAtMs: webhook.createdAt,
  deliveries: (webhook.deliveries ?? []).map(toDeliveryMessage),
});

/** The seller account a request names, once checked against the verified caller (docs/security.md). */
const sellerOnly = (actor: subscriptionV1.RegisterSellerWebhookRequest['actor'], id: number): number => {
  if (id <= 0)
    throw validationError('seller_account_id is required', [
      { path: 'seller_account_id', message: 'is required' },
    ]);
  return actingAccountId(actor, id, 'seller_account_id', ['seller']);
};

/** The query arrives as JSON text so unknown keys survive; text that is not JSON is the caller's mistake. */
const parseQuery = (json: string): unknown => {
  try {
    return JSON.parse(json);
  } catch {
    throw validationError('query is not JSON', [{ path: 'query', message: 'must be a JSON object' }]);
  }
};

type ActorMessage = subscriptionV1.SubscribeRequest['actor'];

/**
 * 0 on the wire means "nobody": anonymous for Subscribe, no account for the owner-only calls. An account must be
 * the verified actor's (docs/security.md, "Internal calls").
 */
const accountIdOf = (actor: ActorMessage, id: number): number | undefined =>
  id > 0 ? actingAccountId(actor, id, 'owner_account_id') : undefined;

const ownerOnly = (actor: ActorMessage, id: number): number => {
  if (id <= 0)
    throw validationError('owner_account_id is required', [
      { path: 'owner_account_id', message: 'is required' },
    ]);
  return actingAccountId(actor, id, 'owner_account_id');
};

const toDeliveryMessage = (delivery: Delivery): subscriptionV1.SubscriptionDelivery => ({
  deliveryId: delivery.deliveryId,
  channelType: delivery.channelType,
  target: delivery.target,
  productId: delivery.productId,
  status: delivery.status,
  attempts: delivery.attempts,
  lastError: delivery.lastError ?? '',
  createdAtMs: delivery.createdAt,
  lastAttemptAtMs: delivery.lastAttemptAt ?? 0,
  nextAttemptAtMs: delivery.status === 'pending' ? (delivery.nextAttemptAt ?? 0) : 0,
  deliveredAtMs: delivery.deliveredAt ?? 0,
});

/** SubscriptionService over gRPC: maps messages to application inputs and back; AppErrors become statuses in rpc. */
export const subscriptionGrpcService = (
  application: SubscriptionApplication,
): GrpcService<subscriptionV1.SubscriptionServiceDefinition> => ({
  definition: subscriptionV1.SubscriptionServiceDefinition,
  implementation: {
    async subscribe(request, context) {
      const ownerAccountId = accountIdOf(request.actor, request.ownerAccountId);
      const { subscription, unsubscribeToken, webhookSecret } = await application.subscribe({
        ...(ownerAccountId === undefined ? {} : { ownerAccountId }),
        draft: { query: parseQuery(request.queryJson), channels: request.channels.map(channelDraftOf) },
        actor: parseActor(request.actor),
        correlationId: request.correlationId === '' ? undefined : request.correlationId,
        traceparent: context.metadata.get('traceparent'),
      });
      return {
        subscription: toSubscriptionMessage(
          subscription,
          await application.unconfirmedMailboxes([subscription]),
        ),
        unsubscribeToken,
        webhookSecret: webhookSecret ?? '',
      };
    },
    async listSubscriptions(request) {
      const subscriptions = await application.listSubscriptions(
        ownerOnly(request.actor, request.ownerAccountId),
      );
      const unconfirmed = await application.unconfirmedMailboxes(subscriptions);
      return { subscriptions: subscriptions.map((one) => toSubscriptionMessage(one, unconfirmed)) };
    },
    async confirmEmail(request, context) {
      const mailbox = await application.confirmEmail({
        token: request.token,
        actor: parseActor(request.actor),
        correlationId: request.correlationId === '' ? undefined : request.correlationId,
        traceparent: context.metadata.get('traceparent'),
      });
      return { mailbox };
    },
    async deleteSubscription(request, context) {
      const requesterAccountId = accountIdOf(request.actor, request.ownerAccountId);
      await application.unsubscribe({
        subscriptionId: request.subscriptionId,
        ...(requesterAccountId === undefined ? {} : { requesterAccountId }),
        unsubscribeToken: request.unsubscribeToken,
        actor: parseActor(request.actor),
        correlationId: request.correlationId === '' ? undefined : request.correlationId,
        traceparent: context.metadata.get('traceparent'),
      });
      return {};
    },
    async rotateWebhookSecret(request, context) {
      const requesterAccountId = accountIdOf(request.actor, request.ownerAccountId);
      const rotated = await application.rotateWebhookSecret({
        subscriptionId: request.subscriptionId,
        ...(requesterAccountId === undefined ? {} : { requesterAccountId }),
        currentSecret: request.currentSecret,
        actor: parseActor(request.actor),
        correlationId: request.correlationId === '' ? undefined : request.correlationId,
        traceparent: context.metadata.get('traceparent'),
      });
      return {
        webhookSecret: rotated.webhookSecret,
        previousValidUntilMs: rotated.previousValidUntil,
        secretGeneration: rotated.generation,
      };
    },
    async getSubscriptionResource(request) {
      const resource = await application.subscriptionResource(
        request.subscriptionId,
        ownerOnly(request.actor, request.ownerAccountId),
      );
      return {
        subscription: toSubscriptionMessage(
          resource.subscription,
          await application.unconfirmedMailboxes([resource.subscription]),
        ),
        matches: resource.matches.map((match) => ({
          productId: match.productId,
          matchedAtMs: match.matchedAt,
          productJson: JSON.stringify(match.product),
        })),
        deliveries: resource.deliveries.map(toDeliveryMessage),
      };
    },
    async registerSellerWebhook(request) {
      const { webhook, secret } = await application.registerSellerWebhook({
        sellerAccountId: sellerOnly(request.actor, request.sellerAccountId),
        url: request.url,
      });
      return { webhook: toSellerWebhookMessage(webhook), secret };
    },
    async listSellerWebhooks(request) {
      const webhooks = await application.listSellerWebhooks(
        sellerOnly(request.actor, request.sellerAccountId),
      );
      return { webhooks: webhooks.map(toSellerWebhookMessage) };
    },
    async deleteSellerWebhook(request) {
      await application.deleteSellerWebhook({
        sellerAccountId: sellerOnly(request.actor, request.sellerAccountId),
        endpointId: request.endpointId,
      });
      return {};
    },
  },
});

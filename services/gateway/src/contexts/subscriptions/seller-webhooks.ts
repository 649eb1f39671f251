import { actorOf, requireSeller } from '../../edge/account.js';
import type { subscriptionV1 } from '@marketplace/proto';
import { notFound, toIso } from '@marketplace/platform';
import type { SubscriptionClient } from './subscription.client.js';
import type { Principal } from '../../edge/account.js';
import { SELLER_EVENT_TYPES, SELLER_WEBHOOK_ID } from './seller-webhook.schema.js';

const isoOrNull = (ms: number): string | null => (ms > 0 ? toIso(ms) : null);

const webhookView = (webhook: subscriptionV1.SellerWebhook) => ({
  id: webhook.endpointId,
  url: webhook.url,
  events: [...SELLER_EVENT_TYPES],
  created_at: toIso(webhook.createdAtMs),
  recent_deliveries: webhook.deliveries.map((delivery) => ({
    id: delivery.deliveryId,
    subject: delivery.productId,
    status: delivery.status as 'pending' | 'delivered' | 'failed',
    attempts: delivery.attempts,
    last_error: delivery.lastError === '' ? null : delivery.lastError,
    created_at: toIso(delivery.createdAtMs),
    next_attempt_at: isoOrNull(delivery.nextAttemptAtMs),
    delivered_at: isoOrNull(delivery.deliveredAtMs),
  })),
});

/** A seller's webhook endpoints (docs/specification.md, "Seller notifications"), kept by the subscription service. */
export class SellerWebhooks {
  constructor(private readonly subscriptions: SubscriptionClient) {}

  async register(principal: Principal | undefined, url: string) {
    const seller = requireSeller(principal, 'register a webhook');
    const { webhook, secret } = await this.subscriptions.registerSellerWebhook({
      actor: actorOf(seller),
      sellerAccountId: seller.accountId,
      url,
    });
    if (!webhook) throw new Error('RegisterSellerWebhook answered without a webhook');
    return { ...webhookView(webhook), secret };
  }

  async list(principal: Principal | undefined) {
    const seller = requireSeller(principal, 'list its webhooks');
    return {
      webhooks: (
        await this.subscriptions.listSellerWebhooks({
          actor: actorOf(seller),
          sellerAccountId: seller.accountId,
        })
      ).map(webhookView),
    };
  }

  async remove(principal: Principal | undefined, endpointId: string): Promise<void> {
    const seller = requireSeller(principal, 'delete a webhook');
    if (!SELLER_WEBHOOK_ID.test(endpointId)) throw notFound(`no webhook endpoint ${endpointId}`);
    await this.subscriptions.deleteSellerWebhook({
      actor: actorOf(seller),
      sellerAccountId: seller.accountId,
      endpointId,
    });
  }
}

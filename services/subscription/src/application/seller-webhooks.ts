import { randomBytes } from 'node:crypto';
import type { Database, Queryable } from '@marketplace/database';
import type { AddressPolicy } from '@marketplace/outbound-http';
import type { Clock } from '@marketplace/platform';
import { conflict, notFound, validationError } from '@marketplace/platform';
import { webhookSecretOf } from '../domain/webhook-signature.js';
import { validateWebhookUrl } from '../domain/subscription.rules.js';
import { newDeliveryId } from './match-listing.js';
import type { Delivery, NewDelivery, SellerEvent, SellerWebhook } from './ports.js';
import type { Deliveries } from './ports.js';
import type { SellerWebhookEndpoints } from './ports.js';

/** docs/specification.md, "Seller notifications": a seller keeps at most this many endpoints. */
export const SELLER_WEBHOOKS_MAX = 5;

export interface SellerWebhookDependencies {
  readonly db: Database;
  readonly clock: Clock;
  readonly webhooks: SellerWebhookEndpoints;
  readonly deliveries: Deliveries;
  /** The marketplace's key: each endpoint's secret derives from it, as a subscription's does. */
  readonly signingSecret: string;
  readonly webhookAddresses: AddressPolicy;
}

export interface SellerWebhookView extends SellerWebhook {
  readonly deliveries: Delivery[];
}

/**
 * Registers a seller's endpoint: a public http(s) URL (a literal private address is refused now, a host name at
 * each delivery). Answers the endpoint and its own `whsec_` secret, which is derived, never stored, and shown here
 * only.
 */
export const registerSellerWebhook = async (
  deps: SellerWebhookDependencies,
  input: { readonly sellerAccountId: number; readonly url: string },
): Promise<{ webhook: SellerWebhook; secret: string }> => {
  const url = validateWebhookUrl(input.url);
  if (url === undefined) {
    throw validationError('invalid webhook url', [
      { path: 'url', message: 'must be an absolute http or https URL of at most 2000 characters' },
    ]);
  }
  if (deps.webhookAddresses.refusesLiteralHost(new URL(url).hostname)) {
    throw validationError('invalid webhook url', [
      { path: 'url', message: 'must not point at a private or otherwise non-public address' },
    ]);
  }
  const live = await deps.webhooks.live(deps.db, input.sellerAccountId);
  if (live.length >= SELLER_WEBHOOKS_MAX) {
    throw conflict(`a seller keeps at most ${SELLER_WEBHOOKS_MAX} webhook endpoints; delete one first`);
  }
  const webhook: SellerWebhook = {
    endpointId: `whep_${randomBytes(12).toString('base64url')}`,
    sellerAccountId: input.sellerAccountId,
    url,
    createdAt: deps.clock.now(),
  };
  await deps.webhooks.insert(deps.db, webhook);
  return { webhook, secret: webhookSecretOf(deps.signingSecret, webhook.endpointId) };
};

export const listSellerWebhooks = async (
  deps: SellerWebhookDependencies,
  sellerAccountId: number,
): Promise<SellerWebhookView[]> => {
  const live = await deps.webhooks.live(deps.db, sellerAccountId);
  return Promise.all(
    live.map(async (webhook) => ({
      ...webhook,
      deliveries: await deps.deliveries.recent(deps.db, webhook.endpointId),
    })),
  );
};

export const deleteSellerWebhook = async (
  deps: SellerWebhookDependencies,
  input: { readonly sellerAccountId: number; readonly endpointId: string },
): Promise<void> => {
  if (!(await deps.webhooks.remove(deps.db, input.sellerAccountId, input.endpointId, deps.clock.now()))) {
    throw notFound(`no webhook endpoint ${input.endpointId}`);
  }
};

/**
 * Queues each event for each live endpoint of its seller, in the consumer's transaction (so a redelivered event
 * queues nothing twice: the delivery key is endpoint and subject); the delivery worker signs and sends them after
 * the commit, retrying with backoff. A batch reads each seller's endpoints once and queues its deliveries in one
 * statement; events are taken in order, so an order placed earlier in the batch names the seller of its later
 * events. Resolves to the number queued.
 */
export const queueSellerEvents = async (
  deps: Pick<SellerWebhookDependencies, 'webhooks' | 'deliveries' | 'clock'>,
  tx: Queryable,
  events: readonly SellerEvent[],
): Promise<number> => {
  const endpointsOf = new Map<number, readonly SellerWebhook[]>();
  const deliveries: NewDelivery[] = [];
  for (const event of events) {
    if (event.type === 'order.placed' && event.orderId !== undefined && event.sellerAccountId !== undefined) {
      await deps.webhooks.recordOrder(tx, event.orderId, event.sellerAccountId);
    }
    const sellerAccountId = event.sellerAccountId ?? (await deps.webhooks.sellerOfOrder(tx, event.orderId));
    if (sellerAccountId === undefined) continue;
    let endpoints = endpointsOf.get(sellerAccountId);
    if (endpoints === undefined) {
      endpoints = await deps.webhooks.live(tx, sellerAccountId);
      endpointsOf.set(sellerAccountId, endpoints);
    }
    for (const endpoint of endpoints) {
      const deliveryId = newDeliveryId();
      deliveries.push({
        deliveryId,
        subscriptionId: endpoint.endpointId,
        productId: event.subject,
        channelIndex: 0,
        channelType: 'webhook',
        target: endpoint.url,
        body: JSON.stringify({
          id: deliveryId,
          type: event.type,
          created_at: new Date(event.occurredAt).toISOString(),
          data: event.data,
        }),
      });
    }
  }
  await deps.deliveries.enqueue(tx, deliveries, deps.clock.now());
  return deliveries.length;
};

import { createHmac } from 'node:crypto';

/** Headers of a saved_search.match webhook (docs/specification.md, "Saved searches"). */
export const WEBHOOK_HEADERS = {
  signature: 'X-Marketplace-Signature',
  event: 'X-Marketplace-Event',
  delivery: 'X-Marketplace-Delivery',
  timestamp: 'X-Marketplace-Timestamp',
} as const;

/**
 * `t=<unix seconds>,v1=<hex HMAC-SHA256 of "<t>.<raw body>">` (the Stripe and ACP scheme): the timestamp is
 * signed with the exact bytes sent, so a receiver can refuse replays of an old delivery.
 */
export const webhookSignatureOf = (secret: string, timestampSeconds: number, rawBody: string): string => {
  const digest = createHmac('sha256', secret).update(`${timestampSeconds}.${rawBody}`).digest('hex');
  return `t=${timestampSeconds},v1=${digest}`;
};

/**
 * A subscription's own webhook signing secret (`whsec_…`, docs/specification.md, "Saved searches"): derived from the
 * marketplace's key and the subscription id, so nothing secret is stored or published in an event. A receiver
 * knows its own secret only: an HMAC output reveals neither the key nor any other subscription's secret, so no
 * subscriber can forge deliveries to another, nor unsubscribe tokens.
 */
export const webhookSecretOf = (marketplaceKey: string, subscriptionId: string): string =>
  `whsec_${createHmac('sha256', marketplaceKey).update(`webhook-secret.${subscriptionId}`).digest('base64url')}`;

/**
 * The token that ends a subscription without an account (the link in every match email): signed with the
 * marketplace's key itself, which no receiver is ever given (webhooks are signed with `webhookSecretOf`), under its
 * own label; nothing is stored and a leaked token opens one subscription only.
 */
export const unsubscribeTokenOf = (marketplaceKey: string, subscriptionId: string): string =>
  createHmac('sha256', marketplaceKey).update(`unsubscribe.${subscriptionId}`).digest('base64url');

import { createHmac } from 'node:crypto';

/** Headers of a saved_search.match webhook (decisions, "Saved searches"). */
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
 * The token that ends a subscription without an account (the link in every match email): derived from the
 * signing secret under its own label, so nothing is stored and a leaked token opens one subscription only.
 */
export const unsubscribeTokenOf = (secret: string, subscriptionId: string): string =>
  createHmac('sha256', secret).update(`unsubscribe.${subscriptionId}`).digest('base64url');

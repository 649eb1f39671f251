import { createHmac, timingSafeEqual } from 'node:crypto';

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
export const webhookSignatureOf = (secret: string, timestampSeconds: number, rawBody: string): string =>
  webhookSignaturesOf([secret], timestampSeconds, rawBody);

/**
 * One `v1=` entry per secret, newest first: `t=<t>,v1=<new>,v1=<previous>` while a rotated-out secret still signs
 * (docs/security.md, API2), so a receiver accepts the delivery if any entry verifies with the secret it holds.
 */
export const webhookSignaturesOf = (
  secrets: readonly string[],
  timestampSeconds: number,
  rawBody: string,
): string =>
  [
    `t=${timestampSeconds}`,
    ...secrets.map(
      (secret) => `v1=${createHmac('sha256', secret).update(`${timestampSeconds}.${rawBody}`).digest('hex')}`,
    ),
  ].join(',');

/**
 * A subscription's own webhook signing secret (`whsec_…`, docs/specification.md, "Saved searches"): derived from the
 * marketplace's key and the subscription id, so nothing secret is stored or published in an event. A receiver
 * knows its own secret only: an HMAC output reveals neither the key nor any other subscription's secret, so no
 * subscriber can forge deliveries to another, nor unsubscribe tokens.
 */
export const webhookSecretOf = (marketplaceKey: string, subscriptionId: string, generation = 0): string => {
  // Generation 0 (the secret given at creation) keeps the label it always had; each rotation takes the next.
  const label =
    generation === 0 ? `webhook-secret.${subscriptionId}` : `webhook-secret.${subscriptionId}.${generation}`;
  return `whsec_${createHmac('sha256', marketplaceKey).update(label).digest('base64url')}`;
};

/**
 * The token that ends a subscription without an account (the link in every match email): signed with the
 * marketplace's key itself, which no receiver is ever given (webhooks are signed with `webhookSecretOf`), under its
 * own label; nothing is stored and a leaked token opens one subscription only.
 */
export const unsubscribeTokenOf = (marketplaceKey: string, subscriptionId: string): string =>
  createHmac('sha256', marketplaceKey).update(`unsubscribe.${subscriptionId}`).digest('base64url');

/**
 * The token of an email confirmation link (double opt-in, docs/security.md, API6): `<mailbox>.<request id>`
 * as base64url, a dot, and its HMAC-SHA256 under the marketplace's key with its own label. The signature proves
 * the marketplace issued it; expiry and single use are the mailbox aggregate's (the request id names the link).
 */
export const emailConfirmationTokenOf = (
  marketplaceKey: string,
  mailbox: string,
  requestId: string,
): string => {
  const payload = Buffer.from(JSON.stringify([mailbox, requestId])).toString('base64url');
  return `${payload}.${createHmac('sha256', marketplaceKey).update(`email-confirmation.${payload}`).digest('base64url')}`;
};

/** The mailbox and request id of a token this marketplace signed; undefined for anything else. */
export const verifyEmailConfirmationToken = (
  marketplaceKey: string,
  token: string,
): { mailbox: string; requestId: string } | undefined => {
  const [payload, signature, extra] = token.split('.');
  if (payload === undefined || signature === undefined || extra !== undefined) return undefined;
  const expected = createHmac('sha256', marketplaceKey)
    .update(`email-confirmation.${payload}`)
    .digest('base64url');
  const presented = Buffer.from(signature);
  if (presented.length !== expected.length || !timingSafeEqual(presented, Buffer.from(expected))) {
    return undefined;
  }
  const decoded: unknown = JSON.parse(Buffer.from(payload, 'base64url').toString('utf8'));
  if (!Array.isArray(decoded) || decoded.length !== 2) return undefined;
  const [mailbox, requestId] = decoded as unknown[];
  return typeof mailbox === 'string' && typeof requestId === 'string' ? { mailbox, requestId } : undefined;
};

import type { Mailer } from '@marketplace/mailer';
import type { GuardedFetcher } from '@marketplace/outbound-http';
import { OutboundFetchError } from '@marketplace/outbound-http';
import { signedRequestHeaders } from '@marketplace/platform';
import type { Clock, SigningKey } from '@marketplace/platform';
import type { DeliverySender } from '../application/delivery-worker.js';
import type { MatchPayload } from '../domain/match-notification.js';
import { matchEmailOf, SAVED_SEARCH_MATCH } from '../domain/match-notification.js';
import type { AttemptOutcome } from '../domain/delivery-policy.js';
import { outcomeOfStatus } from '../domain/delivery-policy.js';
import type { WebhookSecretState } from '../domain/subscription.decider.js';
import { signingGenerationsAt } from '../domain/subscription.decider.js';
import {
  unsubscribeTokenOf,
  WEBHOOK_HEADERS,
  webhookSecretOf,
  webhookSignaturesOf,
} from '../domain/webhook-signature.js';
import type { Delivery } from '../application/ports.js';

export interface DeliverySenderOptions {
  /** Guarded outbound HTTP: public addresses only (plus OUTBOUND_ALLOW_HOSTS), 10 s per attempt. */
  readonly fetcher: GuardedFetcher;
  readonly mailer: Mailer;
  readonly signingSecret: string;
  /** Adds an RFC 9421 signature to every webhook, verifiable with the JWK /.well-known/ucp lists. */
  readonly signingKey: SigningKey;
  /** Which secret generations sign a subscription's deliveries; undefined: the one given at creation. */
  readonly webhookSecretOf: (subscriptionId: string) => Promise<WebhookSecretState | undefined>;
  readonly clock: Clock;
  /** `{base_url}` of the unsubscribe link in emails. */
  readonly publicBaseUrl: string;
}

/** A refused or malformed address will not become acceptable by retrying; everything else might. */
const outcomeOfFetchError = (error: unknown): AttemptOutcome => {
  if (error instanceof OutboundFetchError) {
    const final = error.reason === 'bad_url' || error.reason === 'forbidden_address';
    return { kind: 'failed', retryable: !final, error: `${error.reason}: ${error.message}` };
  }
  return { kind: 'failed', retryable: true, error: (error as Error).message };
};

/** The body's `type`: saved_search.match, or a seller event (order.placed, quote.requested, order.disputed). */
const eventTypeOf = (body: string): string => {
  const { type } = JSON.parse(body) as { type?: unknown };
  return typeof type === 'string' ? type : SAVED_SEARCH_MATCH;
};

/** Sends an attempt through the delivery's channel: a signed webhook POST or an email. */
export const createDeliverySender = (options: DeliverySenderOptions): DeliverySender => {
  const { fetcher, mailer, signingSecret, clock } = options;

  const postWebhook = async (delivery: Delivery): Promise<AttemptOutcome> => {
    const now = clock.now();
    const timestamp = Math.floor(now / 1000);
    try {
      const secret = (await options.webhookSecretOf(delivery.subscriptionId)) ?? { generation: 0 };
      const secrets = signingGenerationsAt(secret, now).map((generation) =>
        webhookSecretOf(signingSecret, delivery.subscriptionId, generation),
      );
      // Beside the subscription's HMAC, the marketplace key's signature (UCP webhooks, docs/agents.md "Signing
      // key"): UCP-Agent names our profile, where a receiver finds the key by the signature's keyid.
      const signed = {
        'content-type': 'application/json',
        'ucp-agent': `profile="${options.publicBaseUrl}/.well-known/ucp"`,
      };
      const { status } = await fetcher.post(delivery.target, {
        headers: {
          ...signed,
          'user-agent': 'LiquidationMarketplace-Webhooks/1.0',
          [WEBHOOK_HEADERS.event]: eventTypeOf(delivery.body),
          [WEBHOOK_HEADERS.delivery]: delivery.deliveryId,
          [WEBHOOK_HEADERS.timestamp]: String(timestamp),
          [WEBHOOK_HEADERS.signature]: webhookSignaturesOf(secrets, timestamp, delivery.body),
          ...signedRequestHeaders(
            options.signingKey,
            { method: 'POST', url: delivery.target, headers: signed, body: delivery.body },
            timestamp,
          ),
        },
        body: delivery.body,
      });
      return outcomeOfStatus(status);
    } catch (error) {
      return outcomeOfFetchError(error);
    }
  };

  const sendEmail = async (delivery: Delivery): Promise<AttemptOutcome> => {
    const payload = JSON.parse(delivery.body) as MatchPayload;
    const token = unsubscribeTokenOf(signingSecret, delivery.subscriptionId);
    const unsubscribeUrl =
      `${options.publicBaseUrl}/api/subscriptions/${encodeURIComponent(delivery.subscriptionId)}` +
      `/unsubscribe?token=${encodeURIComponent(token)}`;
    try {
      await mailer.send({
        to: delivery.target,
        ...matchEmailOf(payload, unsubscribeUrl),
        // Stable across retries: a repeat after a crash is recognisable as the same message.
        messageId: `<${delivery.deliveryId}@saved-search.marketplace>`,
      });
      return { kind: 'delivered' };
    } catch (error) {
      return { kind: 'failed', retryable: true, error: `mail: ${(error as Error).message}` };
    }
  };

  return (delivery) => (delivery.channelType === 'webhook' ? postWebhook(delivery) : sendEmail(delivery));
};

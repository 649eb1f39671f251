import { z } from 'zod';

/** docs/specification.md, "Seller notifications". */
export const SELLER_EVENT_TYPES = ['order.placed', 'quote.requested', 'order.disputed'] as const;

export const registerSellerWebhookBodySchema = z.strictObject({
  url: z
    .url({ protocol: /^https?$/, error: 'must be an absolute http or https URL' })
    .max(2_000, 'must be at most 2000 characters')
    .describe('a public http(s) endpoint of yours'),
});

export const sellerWebhookIdParamsSchema = z.object({ id: z.string() });

/** An endpoint id as issued: anything else names no endpoint (404). */
export const SELLER_WEBHOOK_ID = /^whep_[A-Za-z0-9_-]{16}$/;

const isoTime = z.string().describe('ISO 8601 time (UTC)');

export const sellerWebhookSchema = z.object({
  id: z.string().describe('whep_…'),
  url: z.string(),
  events: z.array(z.enum(SELLER_EVENT_TYPES)),
  created_at: isoTime,
  recent_deliveries: z
    .array(
      z.object({
        id: z.string().describe('the X-Marketplace-Delivery header and the payload id'),
        subject: z.string().describe('the event and its object, e.g. order.placed:42'),
        status: z.enum(['pending', 'delivered', 'failed']),
        attempts: z.number().int(),
        last_error: z.string().nullable(),
        created_at: isoTime,
        next_attempt_at: isoTime.nullable(),
        delivered_at: isoTime.nullable(),
      }),
    )
    .describe('newest first, at most 100'),
});

export const registeredSellerWebhookSchema = sellerWebhookSchema.extend({
  secret: z
    .string()
    .describe(
      'Shown once: this endpoint’s own signing secret (whsec_…), the HMAC-SHA256 key of X-Marketplace-Signature',
    ),
});

export const sellerWebhookListSchema = z.object({ webhooks: z.array(sellerWebhookSchema) });

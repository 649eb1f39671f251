import { z } from 'zod';
import { CATEGORIES, CONDITIONS, LISTING_LIMITS } from '@marketplace/vocabulary';

/**
 * subscribe_to_query (docs/specification.md, "MCP tools", docs/specification.md, "Saved searches"), for the tool and POST /api/subscriptions. The
 * known filter keys are typed here so agents see them in the published schema; unknown keys pass through and
 * are stored. The subscription service owns the rules (price and MOQ ranges, URLs, anonymous channels) and
 * names the field of each violation the same way (`query/maxPrice`, `channels/0/url`).
 */
const cents = z
  .number({ error: 'must be a whole number of cents' })
  .int('must be a whole number of cents')
  .min(0, 'must be at least 0')
  .max(LISTING_LIMITS.maxPriceCents, `must be at most ${LISTING_LIMITS.maxPriceCents}`);
const units = z
  .number({ error: 'must be a whole number of units' })
  .int('must be a whole number of units')
  .min(1, 'must be at least 1')
  .max(LISTING_LIMITS.maxQuantity, `must be at most ${LISTING_LIMITS.maxQuantity}`);

export const savedSearchQuerySchema = z
  .looseObject(
    {
      category: z.enum(CATEGORIES, { error: `must be one of ${CATEGORIES.join(', ')}` }).optional(),
      condition: z.enum(CONDITIONS, { error: `must be one of ${CONDITIONS.join(', ')}` }).optional(),
      search: z
        .string({ error: 'must be a string' })
        .max(1_000, 'must be at most 1000 characters')
        .optional(),
      minPrice: cents.optional().describe('lowest unit price, in cents'),
      maxPrice: cents.optional().describe('highest unit price, in cents'),
      minQuantity: units.optional().describe('fewest units in the lot'),
      sellerCountry: z
        .string({ error: 'must be a two-letter country code' })
        .regex(/^[A-Za-z]{2}$/, 'must be a two-letter country code')
        .optional(),
      moqRange: z
        .object({ min: units.optional(), max: units.optional() }, { error: 'must be an object {min, max}' })
        .optional()
        .describe('bounds on the minimum order quantity'),
      bulkDealsOnly: z
        .boolean({ error: 'must be true or false' })
        .optional()
        .describe('only lots over the bulk threshold'),
    },
    { error: 'must be an object' },
  )
  .describe('marketplace filter; unknown keys are stored and ignored');

export const channelSchema = z.discriminatedUnion(
  'type',
  [
    z.strictObject({ type: z.literal('webhook'), url: z.string({ error: 'must be a URL' }).max(2_000) }),
    z.strictObject({ type: z.literal('email'), email: z.email({ error: 'must be an email address' }) }),
    z.strictObject({ type: z.literal('mcp_resource') }),
  ],
  { error: 'must be {type: webhook, url}, {type: email, email} or {type: mcp_resource}' },
);

/**
 * Strict, unlike the query: an unknown field (an owner, an id, a token) is a 400 naming it, never dropped in
 * silence; the owner is the caller's credential and the id and token are the service's.
 */
export const subscribeInputSchema = z.strictObject({
  query: savedSearchQuerySchema,
  channels: z
    .array(channelSchema, { error: 'must be an array of channels' })
    .min(1, 'must have 1 to 5 items')
    .max(5, 'must have 1 to 5 items'),
});

export type SubscribeInput = z.output<typeof subscribeInputSchema>;

export const subscriptionIdParamsSchema = z.object({
  id: z.string().regex(/^sub_[0-9a-f]{24}$/, 'must look like sub_<24 hex digits>'),
});

const unsubscribeToken = z.string({ error: 'is required' }).min(1, 'is required').max(200);

export const unsubscribeQuerySchema = z.object({ token: unsubscribeToken });

/** DELETE /api/subscriptions/{id}: the owner's credential, or the unsubscribe token for anyone else. */
export const deleteSubscriptionQuerySchema = z.object({
  token: unsubscribeToken.optional().describe('the unsubscribe token, instead of the owner’s credential'),
});

export const unsubscribedSchema = z.object({ id: z.string(), unsubscribed: z.literal(true) });

const webhookSecret = z
  .string({ error: 'must be a webhook secret (whsec_…)' })
  .regex(/^whsec_[A-Za-z0-9_-]{1,100}$/, 'must be a webhook secret (whsec_…)');

/**
 * POST /api/subscriptions/{id}/rotate-secret (docs/security.md, API2): the owner's credential, or, for an
 * anonymous subscription, a secret that still signs its deliveries. Strict: nothing else may be set.
 */
export const rotateSecretInputSchema = z.strictObject({
  current_secret: webhookSecret
    .optional()
    .describe(
      'the secret held now (or the previous one during an overlap), instead of the owner’s credential',
    ),
});

export type RotateSecretInput = z.output<typeof rotateSecretInputSchema>;

/** rotate_webhook_secret: the same, with the subscription's id. */
export const rotateWebhookSecretToolInputSchema = rotateSecretInputSchema.extend({
  subscription_id: z
    .string({ error: 'must look like sub_<24 hex digits>' })
    .regex(/^sub_[0-9a-f]{24}$/, 'must look like sub_<24 hex digits>'),
});

export const rotatedSecretSchema = z.object({
  id: z.string(),
  webhook_secret: z
    .string()
    .describe('Shown once: the new whsec_… secret, which signs every delivery from now on'),
  secret_generation: z.number().int().describe('1 for the first rotation, and so on'),
  previous_secret_valid_until: z
    .string()
    .describe('Until then (24 h) deliveries also carry a v1= signature with the previous secret'),
});

export type RotatedSecret = z.output<typeof rotatedSecretSchema>;

const channelView = z.union([
  z.object({ type: z.literal('webhook'), url: z.string() }),
  z.object({
    type: z.literal('email'),
    email: z.string(),
    status: z
      .enum(['pending_confirmation', 'active'])
      .describe(
        'pending_confirmation: no match is emailed until the address is confirmed with the link of the ' +
          'confirmation email sent to it (once per address, for all its saved searches)',
      ),
  }),
  z.object({ type: z.literal('mcp_resource') }),
]);

export const subscriptionViewSchema = z.object({
  id: z.string(),
  query: z.record(z.string(), z.unknown()),
  channels: z.array(channelView),
  created_at: z.string(),
  /** The MCP resource and its REST twin; null for an anonymous subscription, which has no reader. */
  resource_uri: z.string().nullable(),
  resource_url: z.string().nullable(),
});

export const subscribeOutputSchema = subscriptionViewSchema.extend({
  /** Shown once: ends the subscription without credentials (DELETE ?token= or the link in emails). */
  unsubscribe_token: z.string(),
  webhook_secret: z
    .string()
    .nullable()
    .describe(
      'Shown once: this subscription’s own webhook signing secret (whsec_…), the HMAC-SHA256 key of ' +
        'X-Marketplace-Signature; null without a webhook channel',
    ),
});

export const subscriptionListSchema = z.object({ subscriptions: z.array(subscriptionViewSchema) });

export const subscriptionResourceSchema = z.object({
  subscription: subscriptionViewSchema,
  matches: z.array(z.object({ matched_at: z.string(), product: z.record(z.string(), z.unknown()) })),
  deliveries: z.array(
    z.object({
      id: z.string(),
      channel: z.enum(['webhook', 'email']),
      target: z.string(),
      product_id: z.string(),
      status: z.enum(['pending', 'delivered', 'failed']),
      attempts: z.number(),
      last_error: z.string().nullable(),
      created_at: z.string(),
      last_attempt_at: z.string().nullable(),
      next_attempt_at: z.string().nullable(),
      delivered_at: z.string().nullable(),
    }),
  ),
});

export type SubscriptionView = z.output<typeof subscriptionViewSchema>;
export type SubscribeOutput = z.output<typeof subscribeOutputSchema>;
export type SubscriptionResourceView = z.output<typeof subscriptionResourceSchema>;

/** The confirmation link of an email channel's address (double opt-in): `?token=` only. */
export const emailConfirmationQuerySchema = z.object({
  token: z
    .string({ error: 'is required' })
    .min(1, { error: 'is required' })
    .max(1_000, { error: 'must be at most 1000 characters' })
    .describe('The token of the link in the confirmation email'),
});

export const emailConfirmedSchema = z.object({
  confirmed: z.literal(true),
  mailbox: z.string().describe('The address confirmed, normalised (lower case, without +tag)'),
});

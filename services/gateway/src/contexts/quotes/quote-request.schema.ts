import { z } from 'zod';
import {
  LISTING_LIMITS,
  QUOTE_ACTIONS,
  QUOTE_LIMITS,
  QUOTE_NEGOTIATION_STATES,
  QUOTE_PARTIES,
  QUOTE_STATUS_FILTERS,
} from '@marketplace/vocabulary';
import { once, optionalParameter, wholeNumber } from '../../edge/schemas/query.schema.js';
import { productIdSchema } from '../../edge/schemas/fields.schema.js';
import { shippingTermsOutput } from '../../edge/schemas/shipping.schema.js';
import { characterCount } from '../../edge/schemas/validate.js';

const boundedText = (maxLength: number) =>
  z
    .string({ error: 'must be a string' })
    .refine((value) => characterCount(value) <= maxLength, `must be at most ${maxLength} characters`);

/** Shared by the REST body and the request_quote tool, whose field names differ. */
export const quoteRequestFields = {
  product_id: productIdSchema,
  quantity: z
    .number({ error: 'must be a whole number' })
    .int('must be a whole number')
    .min(1, 'must be at least 1')
    .max(QUOTE_LIMITS.maxQuantity, `must be at most ${QUOTE_LIMITS.maxQuantity}`),
  buyer_email: z
    .email({ error: 'must be an email address' })
    .max(QUOTE_LIMITS.emailMaxLength, `must be at most ${QUOTE_LIMITS.emailMaxLength} characters`),
  buyer_name: boundedText(QUOTE_LIMITS.buyerNameMaxLength),
  buyer_company: boundedText(QUOTE_LIMITS.buyerCompanyMaxLength),
  target_price: z
    .number({ error: 'must be a whole number of cents' })
    .int('must be a whole number of cents')
    .min(1, 'must be at least 1')
    .max(LISTING_LIMITS.maxPriceCents, `must be at most ${LISTING_LIMITS.maxPriceCents}`)
    .describe('per unit, in cents'),
  message: boundedText(QUOTE_LIMITS.messageMaxLength),
  shipping_destination: boundedText(QUOTE_LIMITS.shippingDestinationMaxLength).describe(
    'where the lot ships to (address, city or ZIP code): the seller prices freight for it',
  ),
};

/** POST /api/ucp/quotes (docs/specification.md, "Quotes"): unknown fields are refused, so a misspelt one is not silently dropped. */
export const quoteRequestBodySchema = z.strictObject(
  {
    product_id: quoteRequestFields.product_id,
    quantity: quoteRequestFields.quantity,
    buyer: z.strictObject(
      {
        email: quoteRequestFields.buyer_email,
        name: quoteRequestFields.buyer_name.optional(),
        company: quoteRequestFields.buyer_company.optional(),
      },
      { error: 'must be an object with email (required), name and company' },
    ),
    target_price: quoteRequestFields.target_price.optional(),
    message: quoteRequestFields.message.optional(),
    shipping_destination: quoteRequestFields.shipping_destination.optional(),
  },
  { error: 'must be a JSON object' },
);

export type QuoteRequestBody = z.output<typeof quoteRequestBodySchema>;

/** The 201 answer, for the OpenAPI document. */
export const submittedQuoteRequestSchema = z.object({
  quote_request_id: z.number().int(),
  claim_token: z
    .string()
    .optional()
    .describe(
      'anonymous requests only: the secret that claims this request for a buyer account ' +
        '(POST /api/ucp/quotes/{id}/claim); also sent in the buyer email of the answer. Keep it private.',
    ),
  status: z.literal('pending'),
  product_id: z.string(),
  quantity: z.number().int(),
  exceeds_available_stock: z.boolean(),
  expected_response: z.string(),
  created_at: z.iso.datetime(),
});

/** `{id}` of `/api/ucp/quotes/{id}/…`, of the form only: beyond 2^53 − 1 it names nothing, 404 (http/path-ids.ts). */
export { quoteRequestIdParamsSchema } from '../../edge/http/path-ids.js';

/** POST /api/ucp/quotes/{id}/claim and the claim_quote tool. */
export const claimTokenSchema = z
  .string({ error: 'must be a string' })
  .min(1, 'must not be empty')
  .max(100, 'must be at most 100 characters')
  .describe('the claim_token of the request’s 201 answer or of the buyer email');

export const claimQuoteBodySchema = z.strictObject(
  { claim_token: claimTokenSchema },
  { error: 'must be a JSON object with claim_token' },
);

const quoteResponseViewSchema = z
  .object({
    action: z.enum(QUOTE_ACTIONS),
    counter_price: z.number().int().nullable().describe('cents per unit; counter only'),
    message: z.string().nullable(),
    responded_at: z.iso.datetime(),
  })
  .nullable()
  .describe("the seller's answer; null while pending");

/** Where the negotiation stands, for both sides' views. */
export const negotiationStateSchema = z
  .enum(QUOTE_NEGOTIATION_STATES)
  .describe(
    "awaiting_seller (the seller's turn), awaiting_buyer (a seller counter-offer is open), agreed, declined",
  );

/** Every step after the request, oldest first (docs/specification.md, "Quotes"). */
export const quoteHistorySchema = z
  .array(
    z.object({
      party: z.enum(QUOTE_PARTIES),
      action: z.enum(QUOTE_ACTIONS),
      price: z
        .number()
        .int()
        .nullable()
        .describe('cents per unit: the price offered (counter) or agreed (accept); null on decline'),
      message: z.string().nullable(),
      at: z.iso.datetime(),
      expires_at: z.iso.datetime().nullable().describe('counter only: until when the offer stands'),
    }),
  )
  .describe('every answer and counter-offer of both sides, oldest first');

export const QUOTED_SHIPPING =
  'the listing’s freight terms when the request was made (docs/specification.md, "Quotes"); null when none were set';

/** A quote request as its buyer sees it (get_quote_status, GET /api/ucp/quotes/{id}). */
export const buyerQuoteRequestSchema = z.object({
  quote_request_id: z.number().int(),
  status: z.enum(['pending', 'responded']),
  product_id: z.string(),
  product_name: z.string(),
  quantity: z.number().int(),
  listed_price: z.number().int().describe('cents per unit when asked'),
  target_price: z.number().int().nullable(),
  currency: z.string(),
  shipping: shippingTermsOutput.describe(QUOTED_SHIPPING),
  response: quoteResponseViewSchema,
  agreed_price: z
    .number()
    .int()
    .nullable()
    .describe('cents per unit; null until the seller accepts or counters'),
  offer_expires_at: z.iso
    .datetime()
    .nullable()
    .describe('the open counter-offer stands, or the agreed price can be checked out, until then'),
  negotiation_state: negotiationStateSchema,
  history: quoteHistorySchema,
  claimed_at: z.iso.datetime().nullable().describe('when a buyer account claimed this anonymous request'),
  created_at: z.iso.datetime(),
  how_to_buy: z.string().describe('what the buyer can do next'),
});

export const buyerQuoteRequestListSchema = z.object({
  quote_requests: z.array(buyerQuoteRequestSchema),
  total: z.number().int(),
});

/** GET /api/ucp/quotes: the caller's own requests, newest first. */
export const buyerQuoteListQuerySchema = z.object({
  status: optionalParameter(once.pipe(z.enum(QUOTE_STATUS_FILTERS))).transform((status) => status ?? 'all'),
  limit: optionalParameter(wholeNumber(1, QUOTE_LIMITS.maxListLimit)).transform(
    (limit) => limit ?? QUOTE_LIMITS.defaultListLimit,
  ),
  offset: optionalParameter(wholeNumber(0, 2_147_483_647)).transform((offset) => offset ?? 0),
});

/** The header that carries an anonymous request's claim token to GET /api/ucp/quotes/{id}. */
export const CLAIM_TOKEN_HEADER = 'x-quote-claim-token';

/**
 * The body of POST /api/ucp/quotes/{id}/respond (buyer) and POST /api/seller/quotes/{id}/respond (seller):
 * counter_price with counter only, and required there.
 */
export const quoteAnswerBodySchema = z
  .strictObject(
    {
      action: z.enum(QUOTE_ACTIONS, { error: `must be one of ${QUOTE_ACTIONS.join(', ')}` }),
      counter_price: quoteRequestFields.target_price.optional(),
      message: quoteRequestFields.message.optional(),
    },
    { error: 'must be a JSON object with action, counter_price (counter only) and message' },
  )
  .superRefine((input, context) => {
    if (input.action === 'counter' && input.counter_price === undefined) {
      context.addIssue({ code: 'custom', path: ['counter_price'], message: 'is required to counter' });
    }
    if (input.action !== 'counter' && input.counter_price !== undefined) {
      context.addIssue({ code: 'custom', path: ['counter_price'], message: 'is only for counter' });
    }
  });

/** An answer's fields (REST body or tool input) in the application's terms. */
export const answerOf = (body: {
  readonly action: (typeof QUOTE_ACTIONS)[number];
  readonly counter_price?: number | undefined;
  readonly message?: string | undefined;
}) => ({ action: body.action, counterPriceCents: body.counter_price, message: body.message });

/** GET /api/seller/quotes: the seller's inbox, newest first. */
export const sellerQuoteListQuerySchema = z.object({
  status: optionalParameter(once.pipe(z.enum(QUOTE_STATUS_FILTERS))).transform(
    (status) => status ?? 'pending',
  ),
  limit: optionalParameter(wholeNumber(1, QUOTE_LIMITS.maxListLimit)).transform(
    (limit) => limit ?? QUOTE_LIMITS.defaultListLimit,
  ),
});

import { z } from 'zod';
import { LISTING_LIMITS, QUOTE_ACTIONS, QUOTE_LIMITS, QUOTE_STATUS_FILTERS } from '@marketplace/vocabulary';
import { once, optionalParameter, wholeNumber } from './catalog-search.schema.js';
import { productIdSchema } from './checkout.schema.js';
import { characterCount } from './validate.js';

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
export const quoteRequestIdParamsSchema = z.object({
  id: z.string().regex(/^[1-9][0-9]*$/, 'must be a quote request id (a positive whole number)'),
});

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
  response: quoteResponseViewSchema,
  agreed_price: z
    .number()
    .int()
    .nullable()
    .describe('cents per unit; null until the seller accepts or counters'),
  offer_expires_at: z.iso.datetime().nullable().describe('the agreed price can be checked out until then'),
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

import { z } from 'zod';
import { QUOTE_ACTIONS, QUOTE_LIMITS, QUOTE_STATUS_FILTERS } from '@marketplace/vocabulary';
import type { QuoteRequests } from './quote.requests.js';
import { idempotencyKeyArgument } from '../../edge/schemas/idempotency-key.schema.js';
import {
  answerOf,
  buyerQuoteRequestListSchema,
  buyerQuoteRequestSchema,
  claimTokenSchema,
  negotiationStateSchema,
  QUOTED_SHIPPING,
  quoteHistorySchema,
  quoteRequestFields,
  submittedQuoteRequestSchema,
} from './quote-request.schema.js';
import { shippingTermsOutput } from '../../edge/schemas/shipping.schema.js';
import type { RateLimiter } from '../../edge/http/rate-limit.js';
import { currentClientAddress } from '../../edge/http/rate-limit.js';
import type { Tool } from '../../edge/mcp/tool.js';

/** request_quote (docs/specification.md, "MCP tools"): the REST body's fields, flattened as the table lists them. */
export const requestQuoteInput = z.object({
  product_id: quoteRequestFields.product_id,
  quantity: quoteRequestFields.quantity,
  buyer_email: quoteRequestFields.buyer_email,
  buyer_name: quoteRequestFields.buyer_name.optional(),
  buyer_company: quoteRequestFields.buyer_company.optional(),
  target_price: quoteRequestFields.target_price.optional(),
  message: quoteRequestFields.message.optional(),
  shipping_destination: quoteRequestFields.shipping_destination.optional(),
  idempotency_key: idempotencyKeyArgument,
});

/** get_quote_requests (docs/specification.md, "MCP tools"). */
export const getQuoteRequestsInput = z.object({
  status: z
    .enum(QUOTE_STATUS_FILTERS, { error: `must be one of ${QUOTE_STATUS_FILTERS.join(', ')}` })
    .default('pending'),
});

const cents = quoteRequestFields.target_price;

/** respond_to_quote (docs/specification.md, "MCP tools"): counter_price only with counter, and required there. */
export const respondToQuoteInput = z
  .object({
    quote_request_id: z
      .number({ error: 'must be a whole number' })
      .int('must be a whole number')
      .min(1, 'must be at least 1'),
    action: z.enum(QUOTE_ACTIONS, { error: `must be one of ${QUOTE_ACTIONS.join(', ')}` }),
    counter_price: cents.optional(),
    message: quoteRequestFields.message.optional(),
  })
  .superRefine((input, context) => {
    if (input.action === 'counter' && input.counter_price === undefined) {
      context.addIssue({ code: 'custom', path: ['counter_price'], message: 'is required to counter' });
    }
    if (input.action !== 'counter' && input.counter_price !== undefined) {
      context.addIssue({ code: 'custom', path: ['counter_price'], message: 'is only for counter' });
    }
  });

const nullableCents = z.number().int().nullable().describe('per unit, in cents');

export const sellerQuoteRequestOutput = z.object({
  quote_request_id: z.number().int(),
  status: z.string().describe('pending or responded'),
  product_id: z.string(),
  product_name: z.string(),
  quantity: z.number().int(),
  exceeds_available_stock: z.boolean(),
  available_quantity: z.number().int(),
  listed_price: z.number().int().describe('per unit, in cents, when the request was made'),
  target_price: nullableCents,
  currency: z.string(),
  buyer: z.object({ email: z.string(), name: z.string().nullable(), company: z.string().nullable() }),
  buyer_verified: z.boolean().describe('the request came with a verified API key or agent token'),
  message: z.string().nullable(),
  shipping_destination: z.string().nullable().describe('where the buyer wants the lot shipped, for freight'),
  shipping: shippingTermsOutput.describe(QUOTED_SHIPPING),
  response: z
    .object({
      action: z.string().describe(QUOTE_ACTIONS.join(', ')),
      counter_price: nullableCents,
      message: z.string().nullable(),
      responded_at: z.string(),
    })
    .nullable(),
  agreed_price: nullableCents.describe('the unit price a checkout of this quote uses'),
  negotiation_state: negotiationStateSchema,
  offer_expires_at: z
    .string()
    .nullable()
    .describe('until when the open counter-offer stands or the agreed price can be bought'),
  history: quoteHistorySchema,
  created_at: z.string(),
});

export const quoteRequestListOutput = z.object({
  quote_requests: z.array(sellerQuoteRequestOutput),
  total: z.number().int(),
});

export const requestQuoteTool = (
  quotes: QuoteRequests,
  limiter: RateLimiter,
): Tool<typeof requestQuoteInput, z.output<typeof submittedQuoteRequestSchema>> => ({
  name: 'request_quote',
  examples: [
    {
      product_id: 'product_12',
      quantity: 500,
      buyer_email: 'purchasing@buyer.example',
      buyer_company: 'Buyer Co',
      target_price: 2000,
      message: 'Can you do 500 units delivered by the 15th?',
      shipping_destination: 'Columbus, OH, US',
      idempotency_key: 'quote-2026-11-26-0001',
    },
  ],
  description:
    `Ask the seller of a product for a bulk quote; the quantity may exceed the listed stock. The seller is ` +
    `emailed and usually answers within ${QUOTE_LIMITS.expectedResponse}. Anonymous callers are limited per IP ` +
    'and buyer email; an API key or agent token raises the allowance and binds the request to the buyer account. ' +
    'Send an idempotency_key to retry safely: a repeat answers the same request. An anonymous request answers a ' +
    'claim_token: keep it, it is what claims the request for a buyer account (claim_quote) before checkout.',
  inputSchema: requestQuoteInput,
  outputSchema: submittedQuoteRequestSchema,
  auth: 'none',
  annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: false, openWorldHint: true },
  handler: async (principal, input) => {
    await limiter.enforce(limiter.quoteChecks(principal, currentClientAddress(), input.buyer_email));
    return quotes.request(
      principal,
      {
        productId: input.product_id,
        quantity: input.quantity,
        buyer: { email: input.buyer_email, name: input.buyer_name, company: input.buyer_company },
        targetPriceCents: input.target_price,
        message: input.message,
        shippingDestination: input.shipping_destination,
        idempotencyKey: input.idempotency_key,
      },
      'mcp',
    );
  },
});

export const getQuoteRequestsTool = (
  quotes: QuoteRequests,
): Tool<typeof getQuoteRequestsInput, z.output<typeof quoteRequestListOutput>> => ({
  name: 'get_quote_requests',
  examples: [{ status: 'pending' }],
  description:
    "The calling seller's quote requests, newest first: pending (default), responded or all. Needs the seller API key.",
  inputSchema: getQuoteRequestsInput,
  outputSchema: quoteRequestListOutput,
  auth: 'seller',
  annotations: { readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: false },
  handler: (principal, input) => quotes.list(principal, input.status),
});

/** Typical arguments of respond_to_quote; /openapi.json reuses them where a route takes the same fields. */
export const RESPOND_TO_QUOTE_EXAMPLES = [
  { quote_request_id: 7, action: 'counter', counter_price: 2300, message: 'Best we can do for 500 units.' },
];

export const respondToQuoteTool = (
  quotes: QuoteRequests,
): Tool<typeof respondToQuoteInput, z.output<typeof sellerQuoteRequestOutput>> => ({
  name: 'respond_to_quote',
  examples: RESPOND_TO_QUOTE_EXAMPLES,
  description:
    'Answer one of your pending quote requests, or the buyer counter-offer on it: accept (at the buyer ' +
    'counter price, else the target price, else the listed price), counter with counter_price (cents per unit, ' +
    'open 7 days), or decline. One answer per turn. The buyer is emailed; an accepted or countered quote can be ' +
    'checked out at the agreed price until offer_expires_at. Needs the seller API key.',
  inputSchema: respondToQuoteInput,
  outputSchema: sellerQuoteRequestOutput,
  auth: 'seller',
  annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: false, openWorldHint: true },
  handler: (principal, input) =>
    quotes.respond(principal, { quoteRequestId: input.quote_request_id, ...answerOf(input) }, 'mcp'),
});

/** Typical arguments of respond_to_counter_offer; /openapi.json reuses them where a route takes the same fields. */
export const RESPOND_TO_COUNTER_OFFER_EXAMPLES = [
  { quote_request_id: 7, action: 'counter', counter_price: 2100, message: 'Meet us at $21.00?' },
  { quote_request_id: 7, action: 'accept' },
];

/** respond_to_counter_offer: the twin of POST /api/ucp/quotes/{id}/respond. */
export const respondToCounterOfferTool = (
  quotes: QuoteRequests,
): Tool<typeof respondToQuoteInput, z.output<typeof buyerQuoteRequestSchema>> => ({
  name: 'respond_to_counter_offer',
  examples: RESPOND_TO_COUNTER_OFFER_EXAMPLES,
  description:
    "Answer the seller's open counter-offer on your quote request (negotiation_state awaiting_buyer): accept " +
    '(the price is agreed and can be bought for 7 days), counter with counter_price (cents per unit; the ' +
    "seller's turn again, open 7 days), or decline. The seller is emailed; the answer shows the whole history. " +
    'An expired offer or not your turn: conflict. Needs a buyer API key or agent token (claim an anonymous ' +
    'request first).',
  inputSchema: respondToQuoteInput,
  outputSchema: buyerQuoteRequestSchema,
  auth: 'buyer',
  annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: false, openWorldHint: true },
  handler: (principal, input) =>
    quotes.respondToCounterOffer(
      principal,
      { quoteRequestId: input.quote_request_id, ...answerOf(input) },
      'mcp',
    ),
});

const quoteRequestId = z
  .number({ error: 'must be a whole number' })
  .int('must be a whole number')
  .min(1, 'must be at least 1')
  .max(Number.MAX_SAFE_INTEGER, 'is too large');

/** claim_quote: the twin of POST /api/ucp/quotes/{id}/claim. */
export const claimQuoteInput = z.strictObject({
  quote_request_id: quoteRequestId,
  claim_token: claimTokenSchema,
});

/** Typical arguments of claim_quote; /openapi.json reuses them where a route takes the same fields. */
export const CLAIM_QUOTE_EXAMPLES = [
  { quote_request_id: 7, claim_token: 'qct_AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA' },
];

export const claimQuoteTool = (
  quotes: QuoteRequests,
): Tool<typeof claimQuoteInput, z.output<typeof buyerQuoteRequestSchema>> => ({
  name: 'claim_quote',
  examples: CLAIM_QUOTE_EXAMPLES,
  description:
    'Claim a quote request made without an account for your buyer account, with the claim_token of its ' +
    'request_quote answer or of the buyer email; then check it out with quote_request_id at the agreed price. ' +
    'Needs a buyer API key or agent token.',
  inputSchema: claimQuoteInput,
  outputSchema: buyerQuoteRequestSchema,
  auth: 'buyer',
  annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: true, openWorldHint: false },
  handler: (principal, input) =>
    quotes.claim(principal, { quoteRequestId: input.quote_request_id, claimToken: input.claim_token }, 'mcp'),
});

/** get_quote_status: the twin of GET /api/ucp/quotes/{id}. */
export const getQuoteStatusInput = z.strictObject({
  quote_request_id: quoteRequestId,
  claim_token: claimTokenSchema.optional(),
});

export const getQuoteStatusTool = (
  quotes: QuoteRequests,
): Tool<typeof getQuoteStatusInput, z.output<typeof buyerQuoteRequestSchema>> => ({
  name: 'get_quote_status',
  examples: [{ quote_request_id: 7 }],
  description:
    "One of your quote requests: its status, the seller's answer, the agreed unit price, until when it can be " +
    'bought, and how to buy. With your buyer API key or agent token, or, for a request made without an ' +
    'account, its claim_token.',
  inputSchema: getQuoteStatusInput,
  outputSchema: buyerQuoteRequestSchema,
  auth: 'none',
  annotations: { readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: false },
  handler: (principal, input) =>
    quotes.status(principal, { quoteRequestId: input.quote_request_id, claimToken: input.claim_token }),
});

/** list_my_quotes: the twin of GET /api/ucp/quotes. */
export const listMyQuotesInput = z.strictObject({
  status: z.enum(QUOTE_STATUS_FILTERS).default('all'),
  limit: z
    .number({ error: 'must be a whole number' })
    .int('must be a whole number')
    .min(1, 'must be at least 1')
    .max(QUOTE_LIMITS.maxListLimit, `must be at most ${QUOTE_LIMITS.maxListLimit}`)
    .default(QUOTE_LIMITS.defaultListLimit),
  offset: z
    .number({ error: 'must be a whole number' })
    .int('must be a whole number')
    .min(0, 'must be at least 0')
    .max(2_147_483_647, 'is too large')
    .default(0),
});

export const listMyQuotesTool = (
  quotes: QuoteRequests,
): Tool<typeof listMyQuotesInput, z.output<typeof buyerQuoteRequestListSchema>> => ({
  name: 'list_my_quotes',
  examples: [{ status: 'responded', limit: 20 }],
  description:
    'Your quote requests (asked with your key or token, or claimed), newest first, each with its status, the ' +
    "seller's answer, the agreed price and how to buy: status pending, responded or all (default); limit and " +
    'offset page through them. Needs a buyer API key or agent token.',
  inputSchema: listMyQuotesInput,
  outputSchema: buyerQuoteRequestListSchema,
  auth: 'buyer',
  annotations: { readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: false },
  handler: (principal, input) => quotes.listMine(principal, input),
});

export const quoteTools = (quotes: QuoteRequests, limiter: RateLimiter): Tool[] => [
  requestQuoteTool(quotes, limiter),
  claimQuoteTool(quotes),
  getQuoteStatusTool(quotes),
  listMyQuotesTool(quotes),
  respondToCounterOfferTool(quotes),
  getQuoteRequestsTool(quotes),
  respondToQuoteTool(quotes),
];

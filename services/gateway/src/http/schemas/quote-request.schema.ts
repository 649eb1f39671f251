import { z } from 'zod';
import { LISTING_LIMITS, QUOTE_LIMITS } from '@marketplace/vocabulary';
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

/** POST /api/ucp/quotes (spec 2.5): unknown fields are refused, so a misspelt one is not silently dropped. */
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
  status: z.literal('pending'),
  product_id: z.string(),
  quantity: z.number().int(),
  exceeds_available_stock: z.boolean(),
  expected_response: z.string(),
  created_at: z.iso.datetime(),
});

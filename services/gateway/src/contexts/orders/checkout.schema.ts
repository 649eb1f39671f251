import { z } from 'zod';
import { QUOTE_LIMITS } from '@marketplace/vocabulary';
import {
  countryCodeSchema,
  positiveIdSchema,
  productIdSchema,
  quantitySchema,
} from '../../edge/schemas/fields.schema.js';

export const MAX_CHECKOUT_LINES = 50;

export const buyerEmailSchema = z
  .email('must be an email address')
  .max(QUOTE_LIMITS.emailMaxLength, `must be at most ${QUOTE_LIMITS.emailMaxLength} characters`);
export const buyerNameSchema = z
  .string({ error: 'must be a string' })
  .max(QUOTE_LIMITS.buyerNameMaxLength, `must be at most ${QUOTE_LIMITS.buyerNameMaxLength} characters`);
export const buyerCompanySchema = z
  .string({ error: 'must be a string' })
  .max(
    QUOTE_LIMITS.buyerCompanyMaxLength,
    `must be at most ${QUOTE_LIMITS.buyerCompanyMaxLength} characters`,
  );

/** docs/specification.md, "Checkout and orders", plus `quote_request_id` (check out an accepted quote) and `shipping_country`. */
export const checkoutBodySchema = z.strictObject({
  line_items: z
    .array(
      z.strictObject({
        product_id: productIdSchema,
        quantity: quantitySchema,
        quote_request_id: positiveIdSchema
          .optional()
          .describe('an accepted or countered quote of this buyer, checked out at its agreed unit price'),
      }),
      { error: 'must be an array of line items' },
    )
    .min(1, 'must have at least 1 item')
    .max(MAX_CHECKOUT_LINES, `must have at most ${MAX_CHECKOUT_LINES} items`),
  buyer: z
    .strictObject({
      email: buyerEmailSchema,
      name: buyerNameSchema.optional(),
      company: buyerCompanySchema.optional(),
    })
    .optional(),
  shipping_country: countryCodeSchema.optional(),
});
export type CheckoutBody = z.infer<typeof checkoutBodySchema>;

export const checkoutIdParamsSchema = z.object({
  id: z.string().regex(/^checkout_[0-9a-f-]{36}$/, 'must be a checkout session id'),
});

const isoTime = z.string().describe('ISO 8601 time (UTC)');

export const checkoutLineViewSchema = z.object({
  product_id: z.string(),
  title: z.string(),
  seller_id: z.number().int(),
  quantity: z.number().int(),
  unit_price: z.number().int().describe('cents per unit'),
  line_total: z.number().int().describe('cents of goods: unit_price times quantity'),
  freight: z
    .number()
    .int()
    .describe(
      'cents of freight of this line, apart from line_total (a flat freight is on the first line of its product)',
    ),
  quote_request_id: z.number().int().optional(),
});

/** The checkout session (docs/specification.md, "Checkout and orders"): amounts in integer cents. */
export const checkoutSessionSchema = z.object({
  id: z.string(),
  status: z.enum(['ready_for_complete', 'requires_escalation', 'completing', 'completed', 'canceled']),
  line_items: z.array(checkoutLineViewSchema),
  totals: z
    .object({
      subtotal: z.number().int().describe('goods'),
      freight: z.number().int().describe('freight of every line'),
      total: z.number().int().describe('goods and freight'),
    })
    .describe('cents'),
  currency: z.string(),
  messages: z.array(z.string()).describe('why the session needs a quote, or why the last completion failed'),
  payment_terms: z.literal('net_30'),
  shipping_country: z.string().optional(),
  expires_at: isoTime,
  order_ids: z.array(z.number().int()),
});
export type CheckoutSessionView = z.infer<typeof checkoutSessionSchema>;

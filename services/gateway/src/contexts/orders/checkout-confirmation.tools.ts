import { z } from 'zod';
import type { CheckoutConfirmations } from './checkout-confirmations.js';
import { checkoutBodySchema, checkoutLineViewSchema } from './checkout.schema.js';
import { completedCheckoutSchema } from './order.schema.js';
import type { Tool } from '../../edge/mcp/tool.js';

/** preview_checkout and POST /api/ucp/checkout/preview: the lines and the destination of a checkout. */
export const previewCheckoutInput = checkoutBodySchema.pick({ line_items: true, shipping_country: true });

export const previewCheckoutOutput = z.object({
  status: z
    .enum(['ready_for_complete', 'requires_escalation', 'completing', 'completed', 'canceled'])
    .describe('ready_for_complete: confirm it; requires_escalation: see escalations'),
  line_items: z.array(
    checkoutLineViewSchema.extend({
      price_source: z.enum(['listing', 'quote']).describe('the listed unit price, or a quote’s agreed one'),
    }),
  ),
  totals: z
    .object({
      goods: z.number().int(),
      freight: z.number().int().describe('apart from goods (the sellers’ freight terms)'),
      total: z.number().int().describe('goods and freight'),
    })
    .describe('cents'),
  currency: z.string(),
  payment_terms: z.literal('net_30'),
  shipping_country: z.string().optional(),
  escalations: z.array(z.string()).describe('what would escalate to a quote, and why'),
  confirmation_token: z
    .string()
    .nullable()
    .describe(
      'pass to confirm_purchase; null when the checkout escalates. Bound to this account and content',
    ),
  confirmation_expires_at: z.iso.datetime().nullable().describe('the token is valid until then (5 minutes)'),
  digest: z.string().describe('a digest of exactly the previewed content, which the token is bound to'),
});

/** confirm_purchase and POST /api/ucp/checkout/confirm. */
export const confirmPurchaseInput = z.strictObject({
  confirmation_token: z
    .string({ error: 'must be a string' })
    .min(1, 'must not be empty')
    .max(16_384, 'must be at most 16384 characters')
    .describe('the confirmation_token of preview_checkout'),
});

/** Typical arguments of preview_checkout; /openapi.json reuses them where a route takes the same fields. */
export const PREVIEW_CHECKOUT_EXAMPLES = [
  {
    line_items: [{ product_id: 'product_12', quantity: 500, quote_request_id: 7 }],
    shipping_country: 'US',
  },
];

export const previewCheckoutTool = (
  confirmations: CheckoutConfirmations,
): Tool<typeof previewCheckoutInput, z.output<typeof previewCheckoutOutput>> => ({
  name: 'preview_checkout',
  examples: PREVIEW_CHECKOUT_EXAMPLES,
  description:
    'Price a purchase without buying: each line with its unit price (listed, or a quote’s agreed price with ' +
    'quote_request_id), the totals, and what would escalate to a quote and why. When nothing escalates, the ' +
    'answer carries a confirmation_token valid 5 minutes, bound to your account and to exactly this content: ' +
    'confirm_purchase places this order, or refuses (conflict) if a price, the stock or an offer changed. ' +
    'Needs a buyer API key or agent token.',
  inputSchema: previewCheckoutInput,
  outputSchema: previewCheckoutOutput,
  auth: 'buyer',
  // It buys nothing, but records a priced checkout session: not read-only.
  annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: false, openWorldHint: false },
  handler: (principal, input) => confirmations.preview(principal, input, 'mcp'),
});

/** Typical arguments of confirm_purchase; /openapi.json reuses them where a route takes the same fields. */
export const CONFIRM_PURCHASE_EXAMPLES = [{ confirmation_token: 'pct_example' }];

export const confirmPurchaseTool = (
  confirmations: CheckoutConfirmations,
): Tool<typeof confirmPurchaseInput, z.output<typeof completedCheckoutSchema>> => ({
  name: 'confirm_purchase',
  examples: CONFIRM_PURCHASE_EXAMPLES,
  description:
    'Place exactly the order a preview_checkout showed, with its confirmation_token, on invoice terms (net 30). ' +
    'Conflict when anything changed since the preview (price, stock, an offer’s expiry), when the token ' +
    'expired, or when it was already used; preview again then. Needs the buyer API key or agent token the ' +
    'preview was made with.',
  inputSchema: confirmPurchaseInput,
  outputSchema: completedCheckoutSchema,
  auth: 'buyer',
  annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: false, openWorldHint: true },
  handler: (principal, input) => confirmations.confirm(principal, input.confirmation_token, 'mcp'),
});

export const checkoutConfirmationTools = (confirmations: CheckoutConfirmations): Tool[] => [
  previewCheckoutTool(confirmations),
  confirmPurchaseTool(confirmations),
];

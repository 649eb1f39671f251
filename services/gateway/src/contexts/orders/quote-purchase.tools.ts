import { z } from 'zod';
import { countryCodeSchema, positiveIdSchema, quantitySchema } from '../../edge/schemas/fields.schema.js';
import { idempotencyKeyArgument } from '../../edge/schemas/idempotency-key.schema.js';
import type { QuotePurchases } from './quote-purchases.js';
import { quickBuyOutput } from './order.tools.js';
import type { Tool } from '../../edge/mcp/tool.js';

/** accept_quote_and_pay: the twin of POST /api/ucp/quotes/{id}/accept-and-pay. */
export const acceptQuoteAndPayInput = z.strictObject({
  quote_request_id: positiveIdSchema,
  quantity: quantitySchema.optional().describe('at most the quoted quantity; default all of it'),
  shipping_country: countryCodeSchema.optional(),
  idempotency_key: idempotencyKeyArgument,
});

/** Typical arguments of accept_quote_and_pay; /openapi.json reuses them where a route takes the same fields. */
export const ACCEPT_QUOTE_AND_PAY_EXAMPLES = [
  { quote_request_id: 7, shipping_country: 'US', idempotency_key: 'quote-7-purchase' },
];

export const acceptQuoteAndPayTool = (
  purchases: QuotePurchases,
): Tool<typeof acceptQuoteAndPayInput, z.infer<typeof quickBuyOutput>> => ({
  name: 'accept_quote_and_pay',
  examples: ACCEPT_QUOTE_AND_PAY_EXAMPLES,
  description:
    "Turn your accepted or countered quote into an order at once, at the seller's agreed price, on invoice terms " +
    '(net 30): the quoted quantity unless you name fewer. The price is used once and expires (get_quote_status ' +
    'says until when). A quote made without an account is claimed first (claim_quote). Needs a buyer API key or ' +
    'agent token; send an idempotency_key to retry safely.',
  inputSchema: acceptQuoteAndPayInput,
  outputSchema: quickBuyOutput,
  auth: 'buyer',
  annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: false, openWorldHint: false },
  handler: (principal, input) => purchases.acceptAndPay(principal, input, 'mcp-tool'),
});

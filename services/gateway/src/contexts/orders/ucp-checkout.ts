import { z } from 'zod';
import { RETURN_POLICY_PATH, TERMS_PATH } from '../../edge/discovery/policies.routes.js';
import { countryCodeSchema, productIdSchema, quantitySchema } from '../../edge/schemas/fields.schema.js';
import type { CheckoutBody, CheckoutSessionView } from './checkout.schema.js';
import { MAX_CHECKOUT_LINES, buyerEmailSchema, buyerNameSchema } from './checkout.schema.js';
import type { OrderView } from './order.schema.js';
import { UCP_CAPABILITIES, UCP_VERSION } from '../../edge/ucp.js';

/**
 * UCP's checkout capability (`dev.ucp.shopping.checkout`, release 2026-04-08; docs/protocols.md
 * §2.3) as a translation of the order service's checkout sessions: every rule (prices, the bulk threshold and its
 * escalation to a quote, freight, stock) is the order service's, this file only renames.
 */

/**
 * The create request (docs/protocols.md §2.3: `line_items[].item.id` is the catalog variant id, which for us is the
 * product id: a lot has one variant). Unknown members (`signals`, `attribution`, …) are ignored, as UCP lets a
 * platform send fields a business does not use.
 */
export const ucpCheckoutCreateSchema = z.object({
  line_items: z
    .array(
      z.object({
        item: z.object({ id: productIdSchema }, { error: 'must be an object with the item id' }),
        quantity: quantitySchema,
      }),
      { error: 'must be an array of line items' },
    )
    .min(1, 'must have at least 1 item')
    .max(MAX_CHECKOUT_LINES, `must have at most ${MAX_CHECKOUT_LINES} items`),
  buyer: z
    .object({
      email: buyerEmailSchema,
      first_name: buyerNameSchema.optional(),
      last_name: buyerNameSchema.optional(),
    })
    .optional(),
  context: z.object({ address_country: countryCodeSchema.optional() }).optional(),
});
export type UcpCheckoutCreate = z.infer<typeof ucpCheckoutCreateSchema>;

/** The order service's checkout request for a UCP create request. */
export const checkoutBodyOfUcp = (request: UcpCheckoutCreate): CheckoutBody => {
  const name = [request.buyer?.first_name, request.buyer?.last_name].filter(Boolean).join(' ');
  return {
    line_items: request.line_items.map((line) => ({ product_id: line.item.id, quantity: line.quantity })),
    ...(request.buyer === undefined
      ? {}
      : { buyer: { email: request.buyer.email, ...(name === '' ? {} : { name }) } }),
    ...(request.context?.address_country === undefined
      ? {}
      : { shipping_country: request.context.address_country }),
  };
};

/** docs/protocols.md §2.3, `status`: ours `completing` is UCP's `complete_in_progress`; the other names are the same. */
const STATUS = {
  ready_for_complete: 'ready_for_complete',
  requires_escalation: 'requires_escalation',
  completing: 'complete_in_progress',
  completed: 'completed',
  canceled: 'canceled',
} as const satisfies Record<CheckoutSessionView['status'], string>;

type Severity = 'recoverable' | 'requires_buyer_input' | 'unrecoverable';

/** An error message (docs/protocols.md §2.3, `messages[]`). */
interface UcpMessage {
  readonly type: 'error';
  readonly code: string;
  readonly content: string;
  readonly severity: Severity;
}

interface UcpTotal {
  readonly type: 'subtotal' | 'fulfillment' | 'tax' | 'total';
  readonly amount: number;
  readonly display_text?: string;
}

/**
 * Goods, freight, tax and total as separate lines (docs/protocols.md §2.3, `totals[]`). No discount line: UCP's
 * discount amounts are below zero, and a quote's agreed price is the unit price itself, so there is never one. Tax
 * is 0 and says why: the marketplace collects none, the seller's invoice carries any tax due (docs/agents.md,
 * "Protocols").
 */
const totalsOf = (goods: number, freight: number): UcpTotal[] => [
  { type: 'subtotal', amount: goods, display_text: 'Goods' },
  { type: 'fulfillment', amount: freight, display_text: 'Freight' },
  { type: 'tax', amount: 0, display_text: 'Tax (invoiced by the seller, not collected here)' },
  { type: 'total', amount: goods + freight },
];

/** The UCP checkout object of a session (docs/protocols.md §2.3, "Checkout object"). */
export const ucpCheckoutView = (
  publicBaseUrl: string,
  session: CheckoutSessionView,
  orders: readonly OrderView[] = [],
) => {
  const escalated = session.status === 'requires_escalation';
  // The human step of an escalation is a quote request; the product's page says how to ask for one.
  const escalatedProduct =
    session.line_items.find((line) => session.messages.some((text) => text.includes(line.product_id))) ??
    session.line_items[0];
  return {
    ucp: {
      version: UCP_VERSION,
      capabilities: { [UCP_CAPABILITIES.checkout]: [{ version: UCP_VERSION }] },
      payment_handlers: {},
    },
    id: session.id,
    status: STATUS[session.status],
    currency: session.currency,
    line_items: session.line_items.map((line, index) => ({
      id: `line_${index + 1}`,
      item: { id: line.product_id, title: line.title, price: line.unit_price },
      quantity: line.quantity,
      totals: totalsOf(line.line_total, line.freight),
    })),
    totals: totalsOf(session.totals.subtotal, session.totals.freight),
    messages: session.messages.map((content): UcpMessage =>
      escalated
        ? {
            type: 'error' as const,
            code: 'requires_quote',
            content,
            severity: 'requires_buyer_input' as const,
          }
        : // Otherwise a message explains why the last completion failed (stock ran out): a new one may succeed.
          { type: 'error' as const, code: 'completion_failed', content, severity: 'recoverable' as const },
    ),
    links: [
      { type: 'terms_of_service', url: `${publicBaseUrl}${TERMS_PATH}`, title: 'Terms of sale' },
      { type: 'refund_policy', url: `${publicBaseUrl}${RETURN_POLICY_PATH}`, title: 'Return policy' },
    ],
    expires_at: session.expires_at,
    ...(escalated && escalatedProduct !== undefined
      ? {
          continue_url: `${publicBaseUrl}/agents/products/${encodeURIComponent(escalatedProduct.product_id)}.md`,
        }
      : {}),
    ...(orders.length === 0
      ? {}
      : {
          // One order per line (services/order/README.md, "Completing"): `id` is the first, `order_ids` all;
          // `permalink_url` is the first order's, read with the buyer's credential (docs/protocols.md §2.3).
          order: {
            id: String(orders[0]!.order_id),
            permalink_url: `${publicBaseUrl}/api/orders/${orders[0]!.order_id}`,
            order_ids: orders.map((order) => order.order_id),
            payment_terms: session.payment_terms,
          },
        }),
  };
};
export type UcpCheckout = ReturnType<typeof ucpCheckoutView>;

/**
 * A business outcome with no session to answer (docs/protocols.md §2.3, "Error response"): `ucp.status` error and
 * the message saying why, no checkout. A session that does not exist, or is another buyer's, is `not_found`.
 */
export const ucpCheckoutErrorView = (code: string, content: string) => ({
  ucp: { version: UCP_VERSION, status: 'error' as const },
  messages: [{ type: 'error', code, content, severity: 'unrecoverable' } satisfies UcpMessage],
});

/**
 * An operation the session's state refuses (completing one that needs a quote, updating a completed one,
 * canceling a completed one), answered as UCP answers business outcomes (docs/protocols.md §2.2-2.3): the session
 * as it is now, the refusal first among its messages, with the severity the state calls for.
 */
export const ucpRefusedView = (refused: UcpCheckout, content: string): UcpCheckout => {
  const severity: Severity =
    refused.status === 'requires_escalation'
      ? 'requires_buyer_input'
      : refused.status === 'completed' || refused.status === 'canceled'
        ? 'unrecoverable'
        : 'recoverable';
  return {
    ...refused,
    messages: [{ type: 'error', code: 'not_allowed', content, severity }, ...refused.messages],
  };
};

// The answer's shape for the MCP tools' output schema; e2e/schemas/ucp-checkout.schema.json is the independent
// encoding the end-to-end tests validate against.
const totalOutput = z.object({
  type: z.enum(['subtotal', 'fulfillment', 'tax', 'total']),
  amount: z.number().int().describe('minor units (cents)'),
  display_text: z.string().optional(),
});
export const ucpCheckoutOutput = z
  .object({
    ucp: z.object({
      version: z.string(),
      status: z.literal('error').optional(),
      capabilities: z.record(z.string(), z.array(z.object({ version: z.string() }))).optional(),
      payment_handlers: z.record(z.string(), z.array(z.looseObject({}))).optional(),
    }),
    id: z.string().optional(),
    status: z
      .enum(['requires_escalation', 'ready_for_complete', 'complete_in_progress', 'completed', 'canceled'])
      .optional(),
    currency: z.string().optional(),
    line_items: z
      .array(
        z.object({
          id: z.string(),
          item: z.object({ id: z.string(), title: z.string(), price: z.number().int() }),
          quantity: z.number().int(),
          totals: z.array(totalOutput),
        }),
      )
      .optional(),
    totals: z.array(totalOutput).optional(),
    messages: z
      .array(
        z.object({
          type: z.literal('error'),
          code: z.string(),
          content: z.string(),
          severity: z.enum(['recoverable', 'requires_buyer_input', 'unrecoverable']),
        }),
      )
      .optional(),
    links: z.array(z.object({ type: z.string(), url: z.string(), title: z.string() })).optional(),
    expires_at: z.string().optional(),
    continue_url: z.string().optional().describe('the human step of requires_escalation: the lot’s page'),
    order: z
      .object({
        id: z.string(),
        permalink_url: z.string(),
        order_ids: z.array(z.number().int()),
        payment_terms: z.string(),
      })
      .optional(),
  })
  .describe(
    'A UCP checkout (UCP 2026-04-08, dev.ucp.shopping.checkout); when no session can be acted on, only ucp ' +
      '(status error) and messages',
  );

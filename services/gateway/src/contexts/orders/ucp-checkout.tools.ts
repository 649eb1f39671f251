import type { ErrorKind } from '@marketplace/platform';
import { isAppError } from '@marketplace/platform';
import { z } from 'zod';
import type { Principal } from '../../edge/account.js';
import type { Tool } from '../../edge/mcp/tool.js';
import { idempotencyKeySchema } from '../../edge/schemas/idempotency-key.schema.js';
import type { CheckoutSessionView } from './checkout.schema.js';
import { checkoutIdParamsSchema } from './checkout.schema.js';
import type { OrderView } from './order.schema.js';
import type { OrderOperations } from './order.operations.js';
import type { UcpCheckout } from './ucp-checkout.js';
import {
  checkoutBodyOfUcp,
  ucpCheckoutCreateSchema,
  ucpCheckoutErrorView,
  ucpCheckoutOutput,
  ucpCheckoutView,
  ucpRefusedView,
} from './ucp-checkout.js';

/**
 * UCP's checkout MCP binding (docs/protocols.md §2.2-2.3): `create_checkout`, `get_checkout`, `update_checkout`,
 * `complete_checkout`, `cancel_checkout` over the same OrderOperations and the same translation (ucp-checkout.ts)
 * as the REST binding (ucp-checkout.routes.ts). Arguments: `meta` (`ucp-agent.profile`, and `idempotency-key`,
 * required to complete and cancel), the session's top-level `id`, the payload under `checkout`. The UCP answer is
 * the structured content; business outcomes (no such session, an operation the session's state refuses) are
 * results with `messages`, refusals of the caller (401, 403, a reused idempotency key, 429, 503) JSON-RPC errors.
 */

/** Tools have no request id of their own: the order events carry this correlation id. */
const TOOL_CORRELATION = 'mcp-ucp-checkout';

/** docs/protocols.md §2.2: the caller's refusals, -32000 on MCP; anything unexpected is -32603. */
const PROTOCOL_ERRORS: readonly ErrorKind[] = [
  'unauthenticated',
  'forbidden',
  'idempotency_conflict',
  'rate_limited',
  'unavailable',
];

const ucpAgent = z.object(
  {
    profile: z
      .url({ protocol: /^https?$/, error: 'must be the http(s) URL of the platform’s UCP profile' })
      .max(2_048, 'must be at most 2048 characters'),
  },
  { error: 'must be an object {profile}' },
);
const metaFields = {
  'ucp-agent': ucpAgent.describe(
    'the platform’s UCP profile; accepted, not fetched (docs/agents.md, "Protocols")',
  ),
};
const IDEMPOTENCY_MEANING =
  'the same key repeated answers what its first call did; another operation with it is refused (-32000 ' +
  'idempotency_conflict)';
/** `meta` of create, get and update: `idempotency-key` optional. Other members are allowed and not read. */
const meta = z
  .looseObject(
    { ...metaFields, 'idempotency-key': idempotencyKeySchema.optional().describe(IDEMPOTENCY_MEANING) },
    { error: 'must be an object {"ucp-agent": {profile}}' },
  )
  .describe('UCP request metadata');
/** `meta` of complete and cancel, which need the key (docs/protocols.md §2.2). */
const keyedMeta = z
  .looseObject(
    { ...metaFields, 'idempotency-key': idempotencyKeySchema.describe(IDEMPOTENCY_MEANING) },
    { error: 'must be an object {"ucp-agent": {profile}, "idempotency-key"}' },
  )
  .describe('UCP request metadata; idempotency-key required');

const sessionId = checkoutIdParamsSchema.shape.id.describe('the checkout session’s id');

const createInput = z.object({ checkout: ucpCheckoutCreateSchema, meta });
const getInput = z.object({ id: sessionId, meta });
const updateInput = z.object({ id: sessionId, checkout: ucpCheckoutCreateSchema, meta });
const completeInput = z.object({
  id: sessionId,
  // UCP's `payment` is not read: the one payment method is invoice terms, net 30 (docs/agents.md, "Protocols").
  checkout: z
    .looseObject({}, { error: 'must be an object' })
    .optional()
    .describe('finalization data ({payment}); not read: the order is on invoice terms, net 30'),
  meta: keyedMeta,
});
const cancelInput = z.object({ id: sessionId, meta: keyedMeta });

type UcpCheckoutAnswer = z.infer<typeof ucpCheckoutOutput>;

const UCP_AGENT = { 'ucp-agent': { profile: 'https://agent.example/profiles/shopping-agent.json' } };
const EXAMPLE_ID = 'checkout_0f6d2c1e-8b7a-4c3d-9e21-5a4b3c2d1e0f';
const EXAMPLE_CHECKOUT = {
  line_items: [{ item: { id: 'product_12' }, quantity: 20 }],
  buyer: { email: 'purchasing@example.com', first_name: 'Ada', last_name: 'Buyer' },
  context: { address_country: 'US' },
};
const EXAMPLE_KEY = '550e8400-e29b-41d4-a716-446655440000';

const WRITE = { readOnlyHint: false, openWorldHint: false } as const;

export const ucpCheckoutTools = (orders: OrderOperations, publicBaseUrl: string): Tool[] => {
  const view = (session: CheckoutSessionView, placed: readonly OrderView[] = []) =>
    ucpCheckoutView(publicBaseUrl, session, placed);
  /**
   * The operation's checkout, or the business outcome UCP answers instead of an error (docs/protocols.md §2.3):
   * no such session (another buyer's included) is `not_found`; a state that refuses the operation answers the
   * session as it is now with the refusal. Every other failure goes on to the dispatcher.
   */
  const outcome = async (
    principal: Principal | undefined,
    id: string,
    run: () => Promise<UcpCheckout>,
  ): Promise<UcpCheckoutAnswer> => {
    try {
      return await run();
    } catch (error) {
      if (!isAppError(error)) throw error;
      if (error.kind === 'not_found') return ucpCheckoutErrorView('not_found', error.message);
      if (error.kind !== 'conflict') throw error;
      const { checkout, orders: placed } = await orders.getCheckout(principal, id);
      return ucpRefusedView(view(checkout, placed), error.message);
    }
  };

  const createCheckout: Tool<typeof createInput, UcpCheckoutAnswer> = {
    name: 'create_checkout',
    description:
      'UCP checkout (dev.ucp.shopping.checkout, UCP 2026-04-08): prices checkout.line_items [{item: {id: ' +
      'product id}, quantity}] with checkout.buyer {email, first_name, last_name} and ' +
      'checkout.context.address_country (freight). status ready_for_complete, or requires_escalation over the ' +
      'bulk threshold (messages and continue_url say to request a quote). Totals: subtotal (goods), fulfillment ' +
      '(freight), tax, total, in cents. Anyone may price; a buyer’s key or token makes the session theirs.',
    inputSchema: createInput,
    outputSchema: ucpCheckoutOutput,
    auth: 'none',
    protocolErrors: PROTOCOL_ERRORS,
    annotations: { ...WRITE, destructiveHint: false, idempotentHint: false },
    examples: [{ checkout: EXAMPLE_CHECKOUT, meta: UCP_AGENT }],
    handler: async (principal, input) =>
      view(
        await orders.createCheckout(
          principal,
          checkoutBodyOfUcp(input.checkout),
          TOOL_CORRELATION,
          input.meta['idempotency-key'],
        ),
      ),
  };
  const getCheckout: Tool<typeof getInput, UcpCheckoutAnswer> = {
    name: 'get_checkout',
    description:
      'The buyer’s own UCP checkout session by its top-level id, with its order once completed. Another ' +
      'buyer’s or an unknown session answers ucp.status error with a not_found message.',
    inputSchema: getInput,
    outputSchema: ucpCheckoutOutput,
    auth: 'buyer',
    protocolErrors: PROTOCOL_ERRORS,
    annotations: { readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: false },
    examples: [{ id: EXAMPLE_ID, meta: UCP_AGENT }],
    handler: (principal, input) =>
      outcome(principal, input.id, async () => {
        const { checkout, orders: placed } = await orders.getCheckout(principal, input.id);
        return view(checkout, placed);
      }),
  };
  const updateCheckout: Tool<typeof updateInput, UcpCheckoutAnswer> = {
    name: 'update_checkout',
    description:
      'Replaces the line items, buyer and context of the buyer’s open UCP checkout session (top-level id, ' +
      'payload under checkout, as create_checkout) and prices it again. A session completing, completed or ' +
      'canceled answers itself with a not_allowed message first.',
    inputSchema: updateInput,
    outputSchema: ucpCheckoutOutput,
    auth: 'buyer',
    protocolErrors: PROTOCOL_ERRORS,
    annotations: { ...WRITE, destructiveHint: true, idempotentHint: true },
    examples: [{ id: EXAMPLE_ID, checkout: EXAMPLE_CHECKOUT, meta: UCP_AGENT }],
    handler: (principal, input) =>
      outcome(principal, input.id, async () =>
        view(
          await orders.updateCheckout(
            principal,
            input.id,
            checkoutBodyOfUcp(input.checkout),
            TOOL_CORRELATION,
            input.meta['idempotency-key'],
          ),
        ),
      ),
  };
  const completeCheckout: Tool<typeof completeInput, UcpCheckoutAnswer> = {
    name: 'complete_checkout',
    description:
      'Places the orders of the buyer’s ready_for_complete UCP checkout session (one per line) on invoice ' +
      'terms, net 30; meta["idempotency-key"] is required and a repeat answers the same orders. A session that ' +
      'needs a quote answers itself with a not_allowed message (requires_buyer_input) and its continue_url.',
    inputSchema: completeInput,
    outputSchema: ucpCheckoutOutput,
    auth: 'buyer',
    protocolErrors: PROTOCOL_ERRORS,
    annotations: { ...WRITE, destructiveHint: false, idempotentHint: true },
    examples: [
      { id: EXAMPLE_ID, checkout: { payment: {} }, meta: { ...UCP_AGENT, 'idempotency-key': EXAMPLE_KEY } },
    ],
    handler: (principal, input) =>
      outcome(principal, input.id, async () => {
        const { checkout, orders: placed } = await orders.completeCheckout(
          principal,
          input.id,
          TOOL_CORRELATION,
          input.meta['idempotency-key'],
        );
        return view(checkout, placed);
      }),
  };
  const cancelCheckout: Tool<typeof cancelInput, UcpCheckoutAnswer> = {
    name: 'cancel_checkout',
    description:
      'Cancels the buyer’s open UCP checkout session (status canceled); meta["idempotency-key"] is required. ' +
      'Canceling a canceled session answers it; a completed one answers itself with a not_allowed message.',
    inputSchema: cancelInput,
    outputSchema: ucpCheckoutOutput,
    auth: 'buyer',
    protocolErrors: PROTOCOL_ERRORS,
    annotations: { ...WRITE, destructiveHint: true, idempotentHint: true },
    examples: [{ id: EXAMPLE_ID, meta: { ...UCP_AGENT, 'idempotency-key': EXAMPLE_KEY } }],
    handler: (principal, input) =>
      outcome(principal, input.id, async () =>
        view(
          await orders.cancelCheckout(principal, input.id, TOOL_CORRELATION, input.meta['idempotency-key']),
        ),
      ),
  };
  return [createCheckout, getCheckout, updateCheckout, completeCheckout, cancelCheckout] as Tool[];
};
